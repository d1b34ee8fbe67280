import { definePattern } from './definePattern.js'
import { positiveCount } from './patternOptions.js'
import { type FanOutOptions, runAll } from './speculate.js'
import type { Candidate, Pattern, PatternOptions } from './types.js'

export interface BestOfNOptions extends PatternOptions, FanOutOptions {
  /** How many attempts (default 4); each gets its index as `attempt` (commands: `FORKPOINT_ATTEMPT`). */
  n?: number
}

/**
 * Run `task` n times in parallel branches and commit the highest-scoring success (a tie
 * goes to the lower attempt); nothing is committed when every attempt fails.
 * @example
 * const outcome = await bestOfN(async (path, attempt) => ({ success: true, score: await grade(path) }), { n: 8 }).apply(ws)
 */
export function bestOfN<V = unknown>(task: Candidate<V>, { n = 4, runner, ...options }: BestOfNOptions = {}): Pattern<V> {
  const count = positiveCount(n, 'n')
  return definePattern<V>('bestOfN', options, (p) =>
    runAll(
      p,
      Array.from({ length: count }, () => task),
      false,
      runner,
    ),
  )
}
