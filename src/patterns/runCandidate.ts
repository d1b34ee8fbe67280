import type { Branch } from '../branch/Branch.js'
import type { RunResult } from '../branch/run/runInBranch.js'
import { UsageError } from '../errors/index.js'
import type { HttpPolicy } from '../effects/httpPolicy.js'
import { withEgressEffects, withHttpEffects } from '../effects/withHttpEffects.js'
import type { EgressProxy } from '../sandbox/runSandboxed.js'
import { runPlain } from './runPlain.js'
import type { Candidate, CommandTask, TaskContext, TaskResult } from './types.js'

/** A candidate's report, checked: a finite score, success or not. */
export interface Verdict {
  success: boolean
  score: number
  value?: unknown
}

/** How a candidate's traffic reaches the effects proxy: the proxy variables (unsandboxed) or the sandbox's network. */
interface Route {
  env?: Record<string, string>
  net?: EgressProxy
}

/** What command candidates report as their value. */
export type CommandValue = Pick<RunResult, 'exitCode' | 'stdout' | 'stderr' | 'changedPaths' | 'durationMs'>

/** Run one candidate in its branch: call the function, or run the command (and its score command). */
export async function runCandidate(
  candidate: Candidate,
  {
    branch,
    index,
    signal,
    context,
    isolate,
    env: callerEnv,
    httpPolicy,
  }: { branch: Branch; index: number; signal: AbortSignal; context: TaskContext; isolate: boolean; env: NodeJS.ProcessEnv; httpPolicy?: HttpPolicy | null },
): Promise<Verdict> {
  if (typeof candidate === 'function') return checkVerdict(await candidate(branch.path, index, signal, context))
  const spec: CommandTask = typeof candidate === 'string' ? { cmd: candidate } : candidate
  if (!spec || (typeof spec.cmd !== 'string' && !Array.isArray(spec.cmd))) throw new UsageError('a candidate is a function, a command line, or { cmd }', {})
  const { cmd, score, env, ...limits } = spec
  const runEnv = { ...callerEnv, ...env, FORKPOINT_ATTEMPT: String(index), ...(context.feedback === undefined ? {} : { FORKPOINT_FEEDBACK: context.feedback }) }
  const run = (what: string | string[], via: Route = {}) => {
    const env = { ...runEnv, ...via.env }
    return isolate ? branch.run(what, { ...limits, ...(via.net ? { net: via.net } : {}), env, signal }) : runPlain(what, { branch, env, signal })
  }
  // the candidate's HTTP goes through an effects proxy of its branch: irreversible requests wait in the branch's outbox
  const effects = {
    store: branch.workspace.store,
    context: { kind: 'branch' as const, id: branch.id, name: branch.name },
    env: callerEnv,
    ...(httpPolicy === undefined ? {} : { policy: httpPolicy }),
  }
  const main = !isolate
    ? await withHttpEffects({ ...effects, nodeHook: true }, (env) => run(cmd, env ? { env } : {}))
    : limits.net === 'host'
      ? await withEgressEffects(effects, (net) => run(cmd, net ? { net } : {}))
      : await run(cmd)
  const value: CommandValue = { exitCode: main.exitCode, stdout: main.stdout, stderr: main.stderr, changedPaths: main.changedPaths, durationMs: main.durationMs }
  const success = value.exitCode === 0
  return { success, score: score === undefined ? Number(success) : scoreOf(await run(score)), value }
}

function checkVerdict(result: TaskResult): Verdict {
  if (typeof result === 'boolean') return { success: result, score: Number(result) }
  if (result === null || typeof result !== 'object' || typeof result.success !== 'boolean') {
    throw new UsageError(`a candidate must return true, false or { success, score?, value? }, not ${JSON.stringify(result) ?? String(result)}`, {})
  }
  const score = result.score ?? Number(result.success)
  if (typeof score !== 'number' || !Number.isFinite(score)) throw new UsageError(`a candidate's score must be a finite number, not ${String(result.score)}`, {})
  return { success: result.success, score, value: result.value }
}

/** The score command's verdict: the last line it printed, as a number. */
function scoreOf(run: CommandValue): number {
  const last = run.stdout.trim().split('\n').pop()?.trim() ?? ''
  const score = last === '' ? NaN : Number(last)
  if (run.exitCode !== 0) throw new UsageError(`the score command exited ${run.exitCode}: ${run.stderr.trim().split('\n').pop() ?? ''}`, { exitCode: run.exitCode })
  if (!Number.isFinite(score)) throw new UsageError(`the score command printed ${JSON.stringify(last)}, not a number`, { stdout: run.stdout })
  return score
}
