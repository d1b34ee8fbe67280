import type { Branch } from '../branch/Branch.js'
import { PatternCallbackError, PatternCancelledError } from '../errors/index.js'
import { BranchPool } from './BranchPool.js'
import { recordExploration } from './explorations.js'
import { type ResolvedOptions, resolveOptions } from './patternOptions.js'
import { type Attempt, type CandidateRunner, type RunCandidatesArgs, runCandidates } from './runCandidates.js'
import type { CandidateResult, Outcome, Pattern, PatternName, PatternOptions } from './types.js'
import { unsandboxedEffects } from './unsandboxedEffects.js'

/** What a pattern's body works with during one `apply`. */
export interface PatternRun {
  pool: BranchPool
  options: ResolvedOptions
  signal: AbortSignal | undefined
  /** Run candidates with the pattern's options and signal: here, or through `runner` (fan-out). */
  run(args: Omit<RunCandidatesArgs, 'pool' | 'options' | 'signal'> & { runner?: CandidateRunner | undefined }): Promise<Attempt[]>
  /** Commit a kept candidate's branch (and its ancestors in the pool) into the target. */
  commit(winner: Attempt & { branch: Branch }, results: CandidateResult[]): Promise<Pick<Outcome, 'committed' | 'winner' | 'commit'>>
}

export type PatternBody<V> = (run: PatternRun) => Promise<Omit<Outcome<V>, 'pattern'>>

/**
 * The part every pattern shares: options checked when it is configured; on `apply`, a
 * pool of branches that is closed (every branch committed or aborted) whatever happens,
 * and cancellation by signal.
 */
export function definePattern<V>(name: PatternName, options: PatternOptions, body: PatternBody<V>): Pattern<V> {
  const resolved = resolveOptions(options)
  return {
    name,
    async apply(target, { signal } = {}) {
      const pool = new BranchPool(target, name, resolved.effects, { onHost: !resolved.isolate, env: resolved.env })
      const warnings = new Set<string>()
      const cancelled = (results: CandidateResult[]) => new PatternCancelledError(`${name} was cancelled; every branch was aborted`, { results })
      const run: PatternRun = {
        pool,
        options: resolved,
        signal,
        async run({ runner = runCandidates, ...args }) {
          const warning = await unsandboxedEffects(pool.workspace.store, args.specs, resolved)
          if (warning) warnings.add(warning)
          return runner({ ...args, pool, options: resolved, signal })
        },
        async commit(winner, results) {
          if (signal?.aborted) throw cancelled(results)
          const commit = await pool.commitChain(winner.branch, resolved.onConflict)
          return { committed: true, winner: winner.result.index, commit }
        },
      }
      const started = new Date()
      const record = (outcome: Omit<Outcome, 'pattern'> | null, error: Error | null) => recordExploration(pool.workspace.store, { pattern: name, started, outcome, error })
      try {
        const outcome = { ...(await body(run)), ...(warnings.size === 0 ? {} : { warnings: [...warnings] }) }
        if (signal?.aborted && !outcome.committed) throw cancelled(outcome.results)
        await record(outcome, null)
        return { pattern: name, ...outcome }
      } catch (err) {
        const results = err instanceof PatternCancelledError ? (err.data.results as CandidateResult[]) : undefined
        await record(results ? { committed: false, results } : null, err as Error)
        throw err
      } finally {
        await pool.close()
      }
    },
  }
}

/** Kept successes, best first: highest score, then lowest index. */
export function rank<T extends Attempt>(attempts: T[]): Array<T & { branch: Branch }> {
  return attempts
    .filter((a): a is T & { branch: Branch } => a.result.success && a.branch !== null)
    .sort((a, b) => b.result.score! - a.result.score! || a.result.index - b.result.index)
}

/** Commit the best kept success, if there is one. */
export async function commitBest<V>(p: PatternRun, attempts: Attempt[]): Promise<Omit<Outcome<V>, 'pattern'>> {
  const results = attempts.map((a) => a.result) as CandidateResult<V>[]
  const [best] = rank(attempts)
  return best ? { ...(await p.commit(best, results)), results } : { committed: false, results }
}

/** Call one of the pattern's own callbacks (expand, critique, judge): what it throws becomes a PatternCallbackError. */
export async function callback<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    throw new PatternCallbackError(`the ${name} callback failed: ${err instanceof Error ? err.message : String(err)}`, { callback: name }, { cause: err })
  }
}
