import { resolve } from 'node:path'
import { ReplayDivergenceError, UsageError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import { recordedCapture, runAgent } from '../record/agentRun.js'
import { assembleRun } from '../record/assembleRun.js'
import type { DeterministicSettings } from '../record/deterministic.js'
import { diffRuns, type RunDiff } from '../diff/diffRuns.js'
import { failOnJournalEvents } from '../record/journalEvents.js'
import { makeRunId, type Run } from '../../objects/Run.js'
import { RunStore } from '../core/RunStore.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import type { AgentStdout, Isolation } from '../record/spawnAgent.js'
import { PayloadCipher } from '../redact/payloadCipher.js'
import type { RedactionRules } from '../redact/Redactor.js'
import { trustedRecordedCommand } from './recordedCommand.js'
import { ReplayNotPossibleError } from '../../errors/index.js'

export interface ReplayRunArgs extends StoreLocator {
  run: Run
  /** The agent command; defaults to the recorded one, when this store recorded the run or `trustCommand` is set. */
  command?: string[] | undefined
  /** Run the recorded command of a run from a file or another store (it runs whatever the run names). */
  trustCommand?: boolean
  /** Serve steps before this index from the recording, run the rest live and record them as a new run. */
  liveFrom?: number | undefined
  /** The user redaction rules live calls are redacted with: the ones the run was recorded with, for its requests to match. A run's own `meta.redactionRules` are never used. */
  rules?: RedactionRules
  /** The replayed command's environment, and where FORKPOINT_KEY opens an encrypted run: the caller's, passed down from its edge. */
  env: NodeJS.ProcessEnv
  stdout?: AgentStdout
}

export interface ReplayResult {
  runId: string
  /** What the replay produced, compared with the recording. */
  diff: RunDiff
  exitCode: number
  isolation: Isolation
  steps: number
  /** Steps served from the recording. */
  served: number
  /** `--live-from`: the new run, stored with the replayed run as its parent. */
  forked: { runId: string; digest: Digest | null } | null
  replayed: Run
  /** The agent's stdout, when `stdout: 'capture'`. */
  agentStdout: string
}

/**
 * Re-execute the agent with every recorded LLM / HTTP / tool response served from the
 * recording and no network at all (a network namespace of its own where the kernel
 * allows, plus the in-process guard). A call the recording does not hold fails at once
 * (ReplayDivergenceError, exit 3) naming it; an attempt to reach the network is an
 * OfflineViolationError (exit 4); a replay whose steps differ from the recording fails
 * with the first divergence. With `liveFrom`, the prefix is served and the rest runs live.
 *
 * @example
 * const result = await replayRun({ run: await loadRun({ spec: 'latest' }) })
 */
export async function replayRun(args: ReplayRunArgs): Promise<ReplayResult> {
  const { run, liveFrom, env, stdout = 'inherit' } = args
  const cwd = resolve(args.dir ?? process.cwd())
  if (run.redaction === 'content') throw new ReplayNotPossibleError(`run ${run.runId} was recorded with --redact content: it can be diffed but not replayed`)
  if (liveFrom !== undefined && (!Number.isInteger(liveFrom) || liveFrom < 0 || liveFrom > run.steps.length)) {
    throw new UsageError(`--live-from must be a step index from 0 to ${run.steps.length}`)
  }
  const store = (await openStore({ ...args, dir: cwd })).store
  const command = args.command?.length ? args.command : await trustedRecordedCommand({ run, store, trust: args.trustCommand === true })
  const capture = recordedCapture(run)
  const outcome = await runAgent({
    store,
    command,
    cwd,
    env,
    policy: { mode: run.redaction, rules: args.rules ?? {} },
    capture,
    replay: { run, liveFrom, onMiss: 'fail' },
    offline: liveFrom === undefined,
    deterministic: recordedDeterminism(run),
    stdout,
  })
  failOnJournalEvents(outcome.entries)
  const replayed = assembleRun(outcome.entries, {
    runId: makeRunId(outcome.startedAt.getTime()),
    entrypoint: run.entrypoint,
    startedAt: outcome.startedAt,
    endedAt: outcome.endedAt,
    status: outcome.exit.exitCode === 0 ? 'ok' : 'failed',
    redaction: run.redaction,
    encryption: run.encryption,
    parent: run.runId,
    meta: { ...run.meta, exitCode: outcome.exit.exitCode, replayOf: run.runId, ...(liveFrom !== undefined ? { liveFrom } : {}) },
  })
  const cipher = PayloadCipher.forRuns(env, run)
  const diff = diffRuns({ a: run, b: replayed, cipher })
  const served = replayed.steps.filter((s) => s.meta?.['replayed'] === true).length
  const base = {
    runId: run.runId,
    diff,
    exitCode: outcome.exit.exitCode,
    isolation: outcome.exit.isolation,
    steps: replayed.steps.length,
    served,
    replayed,
    agentStdout: outcome.exit.stdout,
  }
  if (liveFrom !== undefined) {
    const runs = RunStore.open({ store })
    try {
      return { ...base, forked: { runId: replayed.runId, digest: await runs.save(replayed) } }
    } finally {
      runs.close()
    }
  }
  if (diff.status !== 'exact_match') {
    throw new ReplayDivergenceError(`replay of ${run.runId} diverged (${diff.status}): ${diff.explanation}`, { diff: diff as unknown as Record<string, unknown> })
  }
  const recordedExit = run.meta['exitCode']
  if (typeof recordedExit === 'number' && recordedExit !== outcome.exit.exitCode) {
    throw new ReplayDivergenceError(`replay of ${run.runId} served every step but the agent exited ${outcome.exit.exitCode}, not ${recordedExit} as recorded`)
  }
  return { ...base, forked: null }
}

export function recordedDeterminism(run: Run): DeterministicSettings | null {
  const d = run.meta['deterministic'] as { epochMs?: unknown; seed?: unknown } | undefined
  return d && typeof d.epochMs === 'number' && typeof d.seed === 'number' ? { epochMs: d.epochMs, seed: d.seed } : null
}
