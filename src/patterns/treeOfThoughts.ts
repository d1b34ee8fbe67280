import { UsageError } from '../errors/index.js'
import { definePattern } from './definePattern.js'
import { positiveCount } from './patternOptions.js'
import { type TreeSearchOptions, searchLevels } from './searchLevels.js'
import type { Candidate, Pattern } from './types.js'

/**
 * Tree of thoughts, best-first: run the strategies, take the best, expand it into
 * sub-strategies run in nested branches of it, take the best of those, and so on to
 * `maxDepth` (a beam search of width 1). The best node on that path is committed, through
 * its ancestors, into the target.
 * @example
 * const outcome = await treeOfThoughts([planA, planB], { expand: ({ path }) => refinements(path), evaluate: grade, maxDepth: 3 }).apply(ws)
 */
export function treeOfThoughts<V = unknown>(strategies: Candidate<V>[], { expand, evaluate, maxDepth = 3, ...options }: TreeSearchOptions): Pattern<V> {
  const depth = checkTreeSearch(strategies, expand, maxDepth, 'treeOfThoughts')
  return definePattern<V>('treeOfThoughts', options, (p) => searchLevels(p, strategies, { expand, ...(evaluate ? { evaluate } : {}), maxDepth: depth, beamWidth: 1 }))
}

/** The arguments both tree searches share, checked. */
export function checkTreeSearch(strategies: unknown[], expand: unknown, maxDepth: number, pattern: string): number {
  if (!Array.isArray(strategies) || strategies.length === 0) throw new UsageError(`${pattern} needs at least one strategy`, {})
  if (typeof expand !== 'function') throw new UsageError(`${pattern} needs expand(node) => sub-strategies`, {})
  return positiveCount(maxDepth, 'maxDepth')
}
