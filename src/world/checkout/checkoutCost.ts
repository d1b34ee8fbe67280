import { InvalidImageError, PathLimitError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import { EXPANSION_FLOOR, type Limits, raiseHint } from '../../util/limits.js'
import { quotePath } from '../diff/quotePath.js'
import type { Chunks } from '../../objects/Chunks.js'
import type { Tree } from '../../objects/Tree.js'

/** How many directories deep a tree may go: far beyond real projects, far below what makes every walk slow. */
export const MAX_TREE_DEPTH = 256

/** Where a cost walk reads trees and chunk lists (the store, or an image being checked). */
export interface CostSources {
  tree: (digest: Digest) => Promise<Tree>
  chunks: (digest: Digest) => Promise<Chunks>
}

/** What checking out a tree costs, and the distinct content it is made of. */
export interface CheckoutCost {
  /** Bytes of regular files written, every path counted. */
  bytes: number
  /** Files, directories and symlinks created. */
  paths: number
  /** Directories deep. */
  height: number
  /** Bytes of the distinct blobs those files are made of. */
  distinctBytes: number
  /** Entries of the distinct trees. */
  distinctEntries: number
}

interface SubtreeCost {
  bytes: number
  paths: number
  height: number
}

/**
 * What checking out `root` would write, found by visiting each tree and chunk list once
 * (a subtree shared by many paths is summed from its one visit): 26 trees each naming the
 * one below twice cost 26 visits, not 2^26. Refuses a tree deeper than MAX_TREE_DEPTH as
 * it reaches it (PathLimitError, exit 5), so the walk never nests deeper either.
 */
export async function checkoutCost(sources: CostSources, root: Digest): Promise<CheckoutCost> {
  const costs = new Map<Digest, SubtreeCost>()
  const blobs = new Map<Digest, number>()
  const chunkLists = new Set<Digest>()
  let distinctEntries = 0
  const names: string[] = []
  const visit = async (digest: Digest): Promise<SubtreeCost> => {
    const known = costs.get(digest)
    if (known) return known
    const cost: SubtreeCost = { bytes: 0, paths: 0, height: 0 }
    const tree = await sources.tree(digest)
    distinctEntries += tree.entries.length
    for (const entry of tree.entries) {
      cost.paths++
      if (entry.type === 'file') {
        cost.bytes += entry.size
        if ('blob' in entry) blobs.set(entry.blob, entry.size)
        else await addChunks(entry.chunks)
      } else if (entry.type === 'dir') {
        names.push(entry.name)
        if (names.length > MAX_TREE_DEPTH) throw tooDeep(names)
        const sub = await visit(entry.tree)
        names.pop()
        cost.bytes += sub.bytes
        cost.paths += sub.paths
        cost.height = Math.max(cost.height, sub.height + 1)
      }
    }
    costs.set(digest, cost)
    return cost
  }
  const addChunks = async (digest: Digest): Promise<void> => {
    if (chunkLists.has(digest)) return
    chunkLists.add(digest)
    for (const part of (await sources.chunks(digest)).chunks) blobs.set(part.blob, part.size)
  }
  const { bytes, paths, height } = await visit(root)
  if (height > MAX_TREE_DEPTH) throw tooDeep([`(a path ${height} directories deep)`])
  let distinctBytes = 0
  for (const size of blobs.values()) distinctBytes += size
  return { bytes, paths, height, distinctBytes, distinctEntries }
}

/**
 * Refuse (InvalidImageError, exit 5), before anything is written, a tree whose checkout
 * would cost more than the limits allow: more bytes or paths than `maxCheckoutBytes` /
 * `maxCheckoutPaths`, or, past EXPANSION_FLOOR, more than `maxExpansion` times the distinct
 * content it is made of. `what` names the tree in the message.
 */
export function assertCheckoutBudget(cost: CheckoutCost, limits: Limits, what: string): void {
  const over = (limit: keyof Limits, value: number, max: number, unit: string) =>
    new InvalidImageError(`${what} would check out ${value} ${unit}, more than the limit of ${max}: refusing it (${raiseHint(limit)})`, { limit, max, value })
  if (cost.bytes > limits.maxCheckoutBytes) throw over('maxCheckoutBytes', cost.bytes, limits.maxCheckoutBytes, 'bytes of files')
  if (cost.paths > limits.maxCheckoutPaths) throw over('maxCheckoutPaths', cost.paths, limits.maxCheckoutPaths, 'paths')
  const bytesAllowed = Math.max(EXPANSION_FLOOR.bytes, limits.maxExpansion * cost.distinctBytes)
  if (cost.bytes > bytesAllowed)
    throw over('maxExpansion', cost.bytes, bytesAllowed, `bytes of files (made of ${cost.distinctBytes} distinct bytes, at most ${limits.maxExpansion} times as many allowed)`)
  const pathsAllowed = Math.max(EXPANSION_FLOOR.paths, limits.maxExpansion * cost.distinctEntries)
  if (cost.paths > pathsAllowed)
    throw over('maxExpansion', cost.paths, pathsAllowed, `paths (made of ${cost.distinctEntries} distinct tree entries, at most ${limits.maxExpansion} times as many allowed)`)
}

/** The cost of checking out `root`, refused when over budget. */
export async function admitCheckoutCost(sources: CostSources, root: Digest, limits: Limits, what: string): Promise<CheckoutCost> {
  const cost = await checkoutCost(sources, root)
  assertCheckoutBudget(cost, limits, what)
  return cost
}

function tooDeep(names: string[]): PathLimitError {
  const path = names.join('/')
  const shown = path.length > 200 ? `${path.slice(0, 200)}...` : path
  return new PathLimitError(`refusing the tree: ${quotePath(shown)} cannot be written: the tree is more than ${MAX_TREE_DEPTH} directories deep`, { path })
}
