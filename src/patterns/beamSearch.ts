import { definePattern } from './definePattern.js'
import { positiveCount } from './patternOptions.js'
import { type TreeSearchOptions, searchLevels } from './searchLevels.js'
import { checkTreeSearch } from './treeOfThoughts.js'
import type { Candidate, Pattern } from './types.js'

export interface BeamSearchOptions extends TreeSearchOptions {
  /** Nodes kept at each depth, across all beams (default 3). */
  beamWidth?: number
}

/**
 * Beam search: run the strategies and keep the global top `beamWidth`; expand each into
 * sub-strategies in nested branches and keep the top `beamWidth` of all the children
 * together, depth after depth up to `maxDepth`. The best node seen (a tie goes to the
 * deeper) is committed through its ancestors.
 * @example
 * const outcome = await beamSearch(starts, { expand: ({ path }) => nextSteps(path), evaluate: grade, beamWidth: 3, maxDepth: 4 }).apply(ws)
 */
export function beamSearch<V = unknown>(strategies: Candidate<V>[], { expand, evaluate, maxDepth = 3, beamWidth = 3, ...options }: BeamSearchOptions): Pattern<V> {
  const depth = checkTreeSearch(strategies, expand, maxDepth, 'beamSearch')
  const width = positiveCount(beamWidth, 'beamWidth')
  return definePattern<V>('beamSearch', options, (p) => searchLevels(p, strategies, { expand, ...(evaluate ? { evaluate } : {}), maxDepth: depth, beamWidth: width }))
}
