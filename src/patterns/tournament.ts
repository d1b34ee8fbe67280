import type { Branch } from '../branch/Branch.js'
import { PatternCallbackError, UsageError } from '../errors/index.js'
import { callback, definePattern, rank } from './definePattern.js'
import { mapLimit } from './mapLimit.js'
import { positiveCount } from './patternOptions.js'
import type { Attempt } from './runCandidates.js'
import type { FanOutOptions } from './speculate.js'
import type { Candidate, CandidateResult, Match, Pattern, PatternOptions } from './types.js'

/** Compares two candidates' work: 0 keeps A, 1 keeps B. */
export type Judge = (pathA: string, pathB: string, match: { a: CandidateResult; b: CandidateResult; round: number }) => 0 | 1 | Promise<0 | 1>

export interface TournamentOptions extends PatternOptions, FanOutOptions {
  /** How many candidates to generate (default 4). */
  n?: number
  judge: Judge
}

type Entrant = Attempt & { branch: Branch }

/**
 * Generate n candidates in parallel, then eliminate pairwise (1 v 2, 3 v 4, ... by index;
 * an odd one out goes through) until one remains, and commit it. Failed candidates are out
 * before the first round; each loser's branch is aborted as soon as its match ends. With a
 * `queueRunner`, the candidates run on other machines and every success comes back as a
 * branch here, where the judge runs.
 * @example
 * const outcome = await tournament(writeEssay, { n: 8, judge: (a, b) => (length(a) >= length(b) ? 0 : 1) }).apply(ws)
 */
export function tournament<V = unknown>(task: Candidate<V>, { n = 4, judge, runner, ...options }: TournamentOptions): Pattern<V> {
  const count = positiveCount(n, 'n')
  if (typeof judge !== 'function') throw new UsageError('tournament needs a judge(pathA, pathB) => 0 | 1', {})
  return definePattern<V>('tournament', options, async (p) => {
    const attempts = await p.run({ specs: Array.from({ length: count }, (_, index) => ({ index, candidate: task, parent: p.pool.target })), runner })
    const results = attempts.map((a) => a.result) as CandidateResult<V>[]
    const matches: Match[] = []
    let alive: Entrant[] = rank(attempts).sort((a, b) => a.result.index - b.result.index)
    for (let round = 1; alive.length > 1 && !p.signal?.aborted; round++) {
      const pairs = Array.from({ length: Math.ceil(alive.length / 2) }, (_, i) => alive.slice(2 * i, 2 * i + 2))
      alive = await mapLimit(pairs, p.options.maxParallel, async ([a, b]) => {
        if (!b) return a!
        const pick = await callback('judge', () => judge(a!.branch.path, b.branch.path, { a: a!.result, b: b.result, round }))
        if (pick !== 0 && pick !== 1) throw new PatternCallbackError(`the judge must return 0 or 1, not ${JSON.stringify(pick)}`, { callback: 'judge' })
        const [winner, loser] = pick === 0 ? [a!, b] : [b, a!]
        matches.push({ round, a: a!.result.index, b: b.result.index, winner: winner.result.index })
        await p.pool.abort(loser.branch)
        return winner
      })
    }
    matches.sort((x, y) => x.round - y.round || x.a - y.a)
    const [champion] = alive
    if (!champion || alive.length > 1) return { committed: false, results, matches }
    return { ...(await p.commit(champion, results)), results, matches }
  })
}
