import { UsageError } from '../errors/index.js'
import { type PatternRun, commitBest, definePattern } from './definePattern.js'
import type { CandidateRunner } from './runCandidates.js'
import type { Candidate, Outcome, Pattern, PatternOptions } from './types.js'

/** Options of the patterns that can fan out: speculate, bestOfN and tournament. */
export interface FanOutOptions {
  /**
   * Where the candidates run: in this process's branches (default), or on other machines
   * through `queueRunner(...)` (command candidates only; the winner, or for a tournament
   * every success, comes back as a local branch, committed like any other).
   */
  runner?: CandidateRunner
}

export interface SpeculateOptions extends PatternOptions, FanOutOptions {
  /** The first success wins at once and the others are cancelled (default). false: all run, the highest score wins. */
  firstWins?: boolean
}

/**
 * Run candidates in parallel branches; the first to succeed is committed and the others
 * are cancelled at once (their signal fires, their sandboxes are killed) and aborted.
 * With `firstWins: false` every candidate finishes and the highest-scoring success wins
 * (a tie goes to the lower index).
 * @example
 * const outcome = await speculate(['npm test -- --fix-a', 'npm test -- --fix-b'], { timeout: '60s' }).apply(ws)
 */
export function speculate<V = unknown>(candidates: Candidate<V>[], { firstWins = true, runner, ...options }: SpeculateOptions = {}): Pattern<V> {
  if (!Array.isArray(candidates) || candidates.length === 0) throw new UsageError('speculate needs at least one candidate', {})
  return definePattern<V>('speculate', options, (p) => runAll(p, candidates, firstWins, runner))
}

/** Every candidate in its own branch of the target, then the best success committed. */
export async function runAll<V>(p: PatternRun, candidates: Candidate<V>[], firstWins: boolean, runner: CandidateRunner | undefined): Promise<Omit<Outcome<V>, 'pattern'>> {
  const attempts = await p.run({ specs: candidates.map((candidate, index) => ({ index, candidate, parent: p.pool.target })), firstWins, runner, bestOnly: true })
  return commitBest<V>(p, attempts)
}
