import { RunArtifactError } from '../../errors/index.js'
import { jsonDataProblem } from '../../util/jsonDataProblem.js'
import { jsonTextTooDeep, MAX_JSON_DEPTH, MAX_JSON_FILE_BYTES } from '../../util/jsonDepth.js'
import { previewValue } from '../../util/previewValue.js'
import { isSealed } from '../redact/payloadCipher.js'
import { makeRunId, REDACTION_MODES, type Run, RUN_SCHEMA_VERSION, RUN_STATUSES, type Step, STEP_TYPES } from '../../objects/Run.js'
import { isRunId } from './runIds.js'
import { hashPayload } from './stepHash.js'

const STATUSES: readonly string[] = RUN_STATUSES
const MODES: readonly string[] = REDACTION_MODES
const RUN_ID_WORDS = "1 to 128 letters, digits, '.', '_', ':' or '-'"

type Obj = Record<string, unknown>

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** The JSON of a run artifact's bytes (RunArtifactError, exit 5, when they are not JSON). */
export function parseRunJson(source: Buffer | string, where = 'run artifact'): unknown {
  if (source.length > MAX_JSON_FILE_BYTES)
    throw new RunArtifactError(`${where} is not a valid run: it is over the ${MAX_JSON_FILE_BYTES}-byte limit`, { where, limit: MAX_JSON_FILE_BYTES })
  if (jsonTextTooDeep(source)) throw new RunArtifactError(`${where} is not a valid run: it nests deeper than ${MAX_JSON_DEPTH} levels`, { where, limit: MAX_JSON_DEPTH })
  try {
    return JSON.parse(source.toString())
  } catch {
    // not the parser's message: it quotes the text, and the file may be anything a caller named
    throw new RunArtifactError(`${where} is not valid JSON; re-export it with 'forkpoint runs export'`, { where })
  }
}

/**
 * Parse and check a run artifact (`*.run.json` bytes or a parsed object), migrating
 * older schema versions. Unknown fields are kept. Missing step hashes are computed;
 * with `verifyHashes` (schema validation) every plain step's hashes are checked against
 * its payloads. Diff compares payloads, not hashes, so a hand-edited artifact still
 * diffs by what it says. `repairIds` (for `ci normalize`) mints a new runId for one outside
 * the rule and drops such a parent instead of refusing them. Throws RunArtifactError
 * (exit 5) naming the first problem.
 */
export function parseRun(
  source: unknown,
  where = 'run artifact',
  { verifyHashes = false, owned: ownedObject = false, repairIds = false }: { verifyHashes?: boolean; owned?: boolean; repairIds?: boolean } = {},
): Run {
  // bytes are parsed here, so their steps are ours to complete in place; so are an object's when the caller says so
  const isText = typeof source === 'string' || Buffer.isBuffer(source)
  const owned = ownedObject || isText
  const raw = isText ? parseRunJson(source, where) : source
  const fail = (what: string): never => {
    throw new RunArtifactError(`${where} is not a valid run: ${what}`, { where, problem: what })
  }
  if (!isObj(raw)) return fail('expected a JSON object')
  const problem = jsonDataProblem(raw)
  if (problem) fail(`it ${problem}`)
  if (raw['kind'] !== 'run') fail(`kind is ${previewValue(raw['kind'])}, expected "run"`)
  const version = raw['schemaVersion']
  if (!Number.isInteger(version) || (version as number) < 0) fail('schemaVersion must be a non-negative integer')
  if ((version as number) > RUN_SCHEMA_VERSION) fail(`schemaVersion ${String(version)} is newer than this forkpoint understands (${RUN_SCHEMA_VERSION}); upgrade forkpoint`)
  const run = (version as number) === 0 ? migrateV0(raw) : { ...raw }
  if (repairIds) repairRunIds(run)
  for (const field of ['runId', 'entrypoint', 'startedAt', 'endedAt'] as const) if (typeof run[field] !== 'string') fail(`${field} must be a string`)
  if (!isRunId(run['runId'])) fail(`runId ${previewValue(run['runId'])} is not a run id (${RUN_ID_WORDS})`)
  if (run['parent'] !== undefined && !isRunId(run['parent'])) fail(`parent ${previewValue(run['parent'])} is not a run id (${RUN_ID_WORDS})`)
  if (!STATUSES.includes(run['status'] as string)) fail(`status must be one of ${STATUSES.join(', ')}`)
  if (!MODES.includes(run['redaction'] as string)) fail(`redaction must be one of ${MODES.join(', ')}`)
  if (run['meta'] === undefined) run['meta'] = {}
  if (!isObj(run['meta'])) fail('meta must be an object')
  const encrypted = run['redaction'] === 'encrypt'
  if (encrypted && (!isObj(run['encryption']) || typeof run['encryption']['keyCheck'] !== 'string')) fail('an encrypted run needs encryption.keyCheck')
  if (!Array.isArray(run['steps'])) return fail('steps must be an array')
  run['steps'] = (run['steps'] as unknown[]).map((s, i) => checkStep(s, i, encrypted, verifyHashes, owned, fail))
  return run as unknown as Run
}

function checkStep(raw: unknown, i: number, encrypted: boolean, verifyHashes: boolean, owned: boolean, fail: (what: string) => never): Step {
  if (!isObj(raw)) return fail(`step ${i} is not an object`)
  const at = `step ${i}`
  if (raw['idx'] !== i) fail(`${at} has idx ${previewValue(raw['idx'])}; steps must be numbered 0, 1, 2… in order`)
  if (typeof raw['name'] !== 'string' || raw['name'] === '') fail(`${at} needs a non-empty name`)
  if (!STEP_TYPES.includes(raw['type'] as never)) fail(`${at} type ${previewValue(raw['type'])} is not one of ${STEP_TYPES.join(', ')}`)
  if (!('input' in raw) || !('output' in raw)) fail(`${at} needs input and output (null when there is none)`)
  if (typeof raw['startedAt'] !== 'string') fail(`${at} startedAt must be an ISO date string`)
  if (typeof raw['durationMs'] !== 'number' || !(raw['durationMs'] >= 0)) fail(`${at} durationMs must be a number >= 0`)
  if (raw['meta'] !== undefined && !isObj(raw['meta'])) fail(`${at} meta must be an object`)
  const error = raw['error']
  if (error !== undefined && error !== null && !(isObj(error) && typeof error['message'] === 'string') && !(encrypted && isSealed(error))) {
    fail(`${at} error must be {name, message}`)
  }
  // steps we parsed ourselves are ours to fix up in place (100,000-step artifacts load faster)
  const step = (owned ? raw : { ...raw }) as unknown as Step
  if (error === null) delete step.error
  if (encrypted) {
    if (!isSealed(raw['input']) || !isSealed(raw['output'])) fail(`${at} of an encrypted run holds unencrypted payloads`)
    if (typeof raw['inputHash'] !== 'string' || typeof raw['outputHash'] !== 'string') fail(`${at} of an encrypted run needs inputHash and outputHash`)
  } else {
    for (const field of ['input', 'output'] as const) {
      const key = `${field}Hash` as const
      const stored = raw[key]
      if (typeof stored === 'string' && /^[0-9a-f]{64}$/.test(stored) && !verifyHashes) continue
      const actual = hashPayload(raw[field])
      if (verifyHashes && typeof stored === 'string' && stored !== actual)
        fail(`${at} ${key} does not match its ${field} (edited by hand? 'forkpoint ci normalize' rewrites the hashes)`)
      step[key] = actual
    }
  }
  return step
}

/** For `ci normalize`, which repairs hand-edited artifacts: a runId outside the rule becomes a new one, such a parent goes. */
function repairRunIds(run: Obj): void {
  if (!isRunId(run['runId'])) run['runId'] = makeRunId()
  if (run['parent'] !== undefined && !isRunId(run['parent'])) delete run['parent']
}

/** Version 0 (before redaction modes and stored hashes): steps carried `error: null` and no hashes. */
function migrateV0(raw: Obj): Obj {
  return { ...raw, schemaVersion: RUN_SCHEMA_VERSION, redaction: raw['redaction'] ?? 'secrets', meta: raw['meta'] ?? {} }
}
