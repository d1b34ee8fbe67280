import { RunArtifactError } from '../../errors/index.js'
import { jsonDataProblem } from '../../util/jsonDataProblem.js'
import { jsonTextTooDeep, MAX_JSON_DEPTH, MAX_JSON_FILE_BYTES } from '../../util/jsonDepth.js'
import { invalidRun, isRunId, makeRunId, type Run, RUN_SCHEMA_VERSION, type Step } from '../../objects/Run.js'
import { validateRun, validateRunHeader } from '../../objects/checkRun.js'
import { hashPayload } from './stepHash.js'

type Obj = Record<string, unknown>

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
 * older schema versions; its shape is checked by the run's schemas (objects/checkRun.ts).
 * Unknown fields are kept. Missing step hashes are computed; with `verifyHashes` (schema
 * validation) every plain step's hashes are checked against its payloads. Diff compares
 * payloads, not hashes, so a hand-edited artifact still diffs by what it says.
 * `repairIds` (for `ci normalize`) mints a new runId for one outside the rule and drops
 * such a parent instead of refusing them. Throws RunArtifactError (exit 5) naming the
 * first problem.
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
  const { schemaVersion: version } = validateRunHeader(raw, where)
  const problem = jsonDataProblem(raw)
  if (problem) throw invalidRun(where, `it ${problem}`)
  if (version > RUN_SCHEMA_VERSION) throw invalidRun(where, `schemaVersion ${version} is newer than this forkpoint understands (${RUN_SCHEMA_VERSION}); upgrade forkpoint`)
  const run: Obj = version === 0 ? migrateV0(raw as Obj) : { ...(raw as Obj) }
  if (repairIds) repairRunIds(run)
  if (run['meta'] === undefined) run['meta'] = {}
  const checked = validateRun(run, where)
  const encrypted = checked.redaction === 'encrypt'
  checked.steps = checked.steps.map((s, i) => completeStep(owned ? s : { ...s }, i, encrypted, verifyHashes, where))
  return checked
}

/** A checked step with `error: null` gone and, in the clear, its hashes computed where missing or, with `verifyHashes`, checked. */
function completeStep(step: Step, i: number, encrypted: boolean, verifyHashes: boolean, where: string): Step {
  if (step.error === null) delete step.error
  if (encrypted) return step
  for (const field of ['input', 'output'] as const) {
    const key = `${field}Hash` as const
    const stored: unknown = step[key]
    if (typeof stored === 'string' && /^[0-9a-f]{64}$/.test(stored) && !verifyHashes) continue
    const actual = hashPayload(step[field])
    if (verifyHashes && typeof stored === 'string' && stored !== actual)
      throw invalidRun(where, `step ${i} ${key} does not match its ${field} (edited by hand? 'forkpoint ci normalize' rewrites the hashes)`)
    step[key] = actual
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
