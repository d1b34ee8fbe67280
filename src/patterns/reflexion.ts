import { UsageError } from '../errors/index.js'
import { callback, definePattern } from './definePattern.js'
import type { CommandValue } from './runCandidate.js'
import type { Attempt } from './runCandidates.js'
import type { Candidate, CandidateResult, Pattern, PatternOptions } from './types.js'

/** Turns a failed attempt (its result, and its branch while it still exists) into advice for the next one. */
export type Critique = (result: CandidateResult, path: string | null) => string | Promise<string>

export interface ReflexionOptions extends PatternOptions {
  /** Attempts after the first (default 3). */
  maxRetries?: number
  /** Default: the error, or a command's exit code and the tail of its output. */
  critique?: Critique
}

/**
 * Try, and on failure retry in a fresh branch with the critique of the failed attempt fed
 * in (`context.feedback`; commands: `FORKPOINT_FEEDBACK`). The first success commits.
 * @example
 * const outcome = await reflexion(async (path, attempt, signal, { feedback }) => fix(path, feedback), { maxRetries: 2 }).apply(ws)
 */
export function reflexion<V = unknown>(task: Candidate<V>, { maxRetries = 3, critique = defaultCritique, ...options }: ReflexionOptions = {}): Pattern<V> {
  if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) throw new UsageError(`maxRetries must be a whole number >= 0, not ${String(maxRetries)}`, { maxRetries })
  return definePattern<V>('reflexion', options, async (p) => {
    const attempts: Attempt[] = []
    const results = () => attempts.map((a) => a.result) as CandidateResult<V>[]
    let feedback: string | undefined
    for (let index = 0; index <= maxRetries && !p.signal?.aborted; index++) {
      const [attempt] = await p.run({ specs: [{ index, candidate: task, parent: p.pool.target, ...(feedback === undefined ? {} : { feedback }) }], keep: () => true })
      attempts.push(attempt!)
      const { branch, result } = attempt!
      if (result.success && branch) return { ...(await p.commit({ result, branch }, results())), results: results() }
      if (index === maxRetries || p.signal?.aborted) break
      feedback = await callback('critique', () => critique(result, branch?.path ?? null))
      if (branch) await p.pool.abort(branch)
    }
    return { committed: false, results: results() }
  })
}

/** What went wrong, from the result alone. */
export function defaultCritique(result: CandidateResult): string {
  const run = result.value as Partial<CommandValue> | undefined
  if (run && typeof run.exitCode === 'number') {
    const tail = `${run.stderr ?? ''}\n${run.stdout ?? ''}`.trim().split('\n').slice(-20).join('\n')
    return `attempt ${result.index} exited ${run.exitCode}${tail ? `:\n${tail}` : ''}`
  }
  return `attempt ${result.index} ${result.status}${result.error ? `: ${result.error}` : ''}`
}
