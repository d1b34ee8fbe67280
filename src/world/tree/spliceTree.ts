import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { type TreeSource, treeSource } from './treeSource.js'
import { type TreeEntry, treeObject } from '../../objects/Tree.js'

/**
 * A tree with some paths replaced: each path (relative, '/'-separated) gets the entry
 * given (renamed to its last component), or is removed when null. Only the trees on the
 * way to those paths are read and written, so the cost follows the change, not the tree.
 * Null when a path's parent is not a directory of the tree (the caller must rescan).
 * Trees are read through `read` (trees only in memory too, as a scan's), written to `store`.
 */
export async function spliceTree(store: Store, tree: Digest, changes: Map<string, TreeEntry | null>, read: TreeSource = treeSource(store)): Promise<Digest | null> {
  return splice(
    store,
    read,
    tree,
    outermost(changes).map(([path, entry]) => ({ parts: path.split('/'), entry })),
  )
}

/** The changes not inside another changed path (that one's entry already holds them). */
export function outermost<T>(changes: Map<string, T>): Array<[string, T]> {
  return [...changes].filter(([path]) => !ancestors(path).some((a) => changes.has(a)))
}

interface Change {
  parts: string[]
  entry: TreeEntry | null
}

async function splice(store: Store, read: TreeSource, tree: Digest, changes: Change[]): Promise<Digest | null> {
  const entries = new Map((await read(tree)).entries.map((e) => [e.name, e]))
  const deeper = new Map<string, Change[]>()
  for (const { parts, entry } of changes) {
    const [name, ...rest] = parts as [string, ...string[]]
    if (rest.length === 0) {
      if (entry) entries.set(name, { ...entry, name })
      else entries.delete(name)
    } else {
      deeper.set(name, [...(deeper.get(name) ?? []), { parts: rest, entry }])
    }
  }
  for (const [name, below] of deeper) {
    const dir = entries.get(name)
    if (dir?.type !== 'dir') return null
    const subtree = await splice(store, read, dir.tree, below)
    if (subtree === null) return null
    entries.set(name, { ...dir, tree: subtree })
  }
  const { bytes, digest } = treeObject([...entries.values()])
  await store.writeVerified(digest, bytes)
  return digest
}

/** The paths of the directories above `path`, outermost first. */
export function ancestors(path: string): string[] {
  const parts = path.split('/')
  return parts.slice(1).map((_, i) => parts.slice(0, i + 1).join('/'))
}
