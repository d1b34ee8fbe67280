import { PatternCallbackError } from '../errors/index.js'
import { callback, type PatternRun, rank } from './definePattern.js'
import type { Branch } from '../branch/Branch.js'
import type { Attempt, Evaluate } from './runCandidates.js'
import type { Candidate, CandidateResult, Outcome, PatternOptions } from './types.js'

/** Sub-strategies that continue a node's work in branches of its branch; none ends the search there. */
export type Expand = (node: { path: string; result: CandidateResult; depth: number }) => Candidate[] | Promise<Candidate[]>

export interface TreeSearchOptions extends PatternOptions {
  expand: Expand
  /** Scores a successful node's work (default: the candidate's own score). */
  evaluate?: Evaluate
  /** Levels of branches at most, the strategies being level 1 (default 3). */
  maxDepth?: number
}

interface Node extends Attempt {
  branch: Branch
  up: Node | null
}

/**
 * Level-by-level search: run the strategies, keep the best `beamWidth` successes, expand
 * each into sub-strategies run in nested branches, keep the best `beamWidth` of all
 * children, and so on to `maxDepth`. The best node seen (a tie goes to the deeper) is
 * committed through its ancestors; branches off the beam are aborted level by level.
 */
export async function searchLevels<V>(
  p: PatternRun,
  strategies: Candidate<V>[],
  { expand, evaluate, maxDepth, beamWidth }: { expand: Expand; evaluate?: Evaluate; maxDepth: number; beamWidth: number },
): Promise<Omit<Outcome<V>, 'pattern'>> {
  const results: CandidateResult<V>[] = []
  const seen: Node[] = []
  const runLevel = async (level: Array<{ candidate: Candidate; up: Node | null }>, depth: number): Promise<Node[]> => {
    const specs = level.map(({ candidate, up }, i) => ({
      index: results.length + i,
      candidate,
      parent: up?.branch ?? p.pool.target,
      depth,
      ...(up ? { parentResult: up.result } : {}),
    }))
    const attempts = await p.run({ specs, ...(evaluate ? { evaluate } : {}) })
    results.push(...(attempts.map((a) => a.result) as CandidateResult<V>[]))
    const ranked = rank(attempts.map((a, i) => ({ ...a, up: level[i]!.up })))
    seen.push(...ranked)
    return ranked.slice(0, beamWidth)
  }
  let beam = await runLevel(
    strategies.map((candidate) => ({ candidate, up: null })),
    1,
  )
  let best = beam[0] ?? null
  await prune(p, seen, beam, best)
  for (let depth = 2; depth <= maxDepth && beam.length > 0 && !p.signal?.aborted; depth++) {
    const children: Array<{ candidate: Candidate; up: Node }> = []
    for (const node of beam) {
      const subs = await callback('expand', () => expand({ path: node.branch.path, result: node.result, depth: depth - 1 }))
      if (!Array.isArray(subs)) throw new PatternCallbackError('expand must return an array of candidates', { callback: 'expand' })
      children.push(...subs.map((candidate) => ({ candidate, up: node })))
    }
    if (children.length === 0) break
    const next = await runLevel(children, depth)
    if (next.length === 0) break
    beam = next
    if (next[0]!.result.score! >= best!.result.score!) best = next[0]!
    await prune(p, seen, beam, best)
  }
  return best ? { ...(await p.commit(best, results)), results } : { committed: false, results }
}

/** Abort every node that is neither on the beam, nor the best so far, nor an ancestor of one of them. */
async function prune(p: PatternRun, seen: Node[], beam: Node[], best: Node | null): Promise<void> {
  const keep = new Set<Node>()
  for (const start of [...beam, ...(best ? [best] : [])]) for (let n: Node | null = start; n && !keep.has(n); n = n.up) keep.add(n)
  for (const node of seen) if (!keep.has(node) && node.branch.status === 'live') await p.pool.abort(node.branch)
}
