import { basename, resolve } from 'node:path'
import { recordedCapture, runAgent } from '../record/agentRun.js'
import { assembleRun } from '../record/assembleRun.js'
import { diffRuns, type RunDiff } from '../diff/diffRuns.js'
import { entrypointCommand } from './entrypointCommand.js'
import type { OfflineEntry } from '../record/journal.js'
import { loadRun } from '../core/loadRun.js'
import { normalizeRun } from './normalizeRun.js'
import { PayloadCipher } from '../redact/payloadCipher.js'
import type { RedactionRules } from '../redact/Redactor.js'
import { recordedDeterminism } from '../replay/replayRun.js'
import { makeRunId, type Run } from '../../objects/Run.js'
import { writeRunArtifact } from '../core/runArtifact.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import type { AgentStdout, Isolation } from '../record/spawnAgent.js'

export interface CiCheckArgs extends StoreLocator {
  entrypoint: string
  /** The golden artifact (or a run id). */
  expected: string
  command?: string[]
  /** Let the agent reach the network and the real APIs instead of serving them from `expected`. */
  live?: boolean
  /** Also write the actual (normalised) run here. */
  actualOut?: string
  window?: number
  /** The user redaction rules, as `ci record` was given them; the golden run's `meta.redactionRules` are data and never used. */
  rules?: RedactionRules
  /** The agent's environment, and where FORKPOINT_KEY opens an encrypted golden run: the caller's, passed down from its edge. */
  env: NodeJS.ProcessEnv
  stdout?: AgentStdout
}

/** `pass` (exit 0), `diff` (exit 1), or `offline_violation` (exit 4: the runs match but the agent tried to reach the network). */
export type CiOutcome = 'pass' | 'diff' | 'offline_violation'

export interface CiCheckResult {
  outcome: CiOutcome
  diff: RunDiff
  offlineViolations: string[]
  isolation: Isolation
  exitCode: number
  actual: Run
  actualArtifact: string | null
}

/**
 * Run the entrypoint again and compare with the golden run, offline by default: calls
 * the golden run holds are served from it; any other call fails in the agent as an
 * offline error and shows up as the first divergence. Both runs are normalised first,
 * so timestamps and generated ids never fail a build.
 */
export async function ciCheck(args: CiCheckArgs): Promise<CiCheckResult> {
  const { entrypoint, live = false, window = 10, env, stdout = 'inherit' } = args
  const cwd = resolve(args.dir ?? process.cwd())
  const expected = await loadRun({ ...args, spec: args.expected, dir: cwd })
  const store = (await openStore({ ...args, dir: cwd })).store
  const outcome = await runAgent({
    store,
    command: args.command ?? entrypointCommand(entrypoint, cwd),
    cwd,
    env,
    policy: { mode: expected.redaction, rules: args.rules ?? {} },
    capture: recordedCapture(expected),
    replay: live || expected.redaction === 'content' ? undefined : { run: expected, onMiss: 'offline-error' },
    offline: !live,
    deterministic: recordedDeterminism(expected),
    stdout,
  })
  const actual = assembleRun(outcome.entries, {
    runId: makeRunId(outcome.startedAt.getTime()),
    entrypoint: basename(entrypoint),
    startedAt: outcome.startedAt,
    endedAt: outcome.endedAt,
    status: outcome.exit.exitCode === 0 ? 'ok' : 'failed',
    redaction: expected.redaction,
    encryption: expected.encryption,
    meta: { ...expected.meta, exitCode: outcome.exit.exitCode },
  })
  const cipher = PayloadCipher.forRuns(env, expected)
  const actualNormalized = normalizeRun(actual)
  const diff = diffRuns({ a: normalizeRun(expected), b: actualNormalized, window, cipher })
  const offlineViolations = outcome.entries.filter((e): e is OfflineEntry => e.t === 'offline').map((e) => e.target)
  const result: CiOutcome = diff.status !== 'exact_match' ? 'diff' : offlineViolations.length > 0 ? 'offline_violation' : 'pass'
  const actualArtifact = args.actualOut ? resolve(cwd, args.actualOut) : null
  if (actualArtifact) await writeRunArtifact(actualArtifact, actualNormalized)
  return { outcome: result, diff, offlineViolations, isolation: outcome.exit.isolation, exitCode: outcome.exit.exitCode, actual, actualArtifact }
}
