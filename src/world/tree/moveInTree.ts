import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { entryAt } from './entryAt.js'
import { type TreeEntry, dirEntry, treeObject } from '../../objects/Tree.js'
import type { TreeSource } from './treeSource.js'

interface Change {
  parts: string[]
  entry: TreeEntry | null
}

/** Not possible: a file or symlink stands where a move needs a directory. */
const BLOCKED = Symbol('blocked')

/**
 * A tree with entries moved: each `to` path (a key of `moves`) gets the entry at its `from`
 * path, which goes. Directories on the way to a `to` are made; directories a move empties
 * go, as they would from a checkout. Only the trees on the changed paths are read and
 * written. Null when a `to` lies below a file or symlink of the tree.
 */
export async function moveInTree(store: Store, source: TreeSource, tree: Digest, moves: Map<string, string>): Promise<Digest | null> {
  if (moves.size === 0) return tree
  const changes: Change[] = []
  for (const [to, from] of moves) {
    changes.push({ parts: from.split('/'), entry: null }, { parts: to.split('/'), entry: await entryAt(source, tree, from.split('/')) })
  }
  const moved = await rewrite(store, source, tree, changes)
  if (moved === BLOCKED) return null
  return moved ?? (await writeTree(store, []))
}

/** The directory `tree` (null: none yet) with `changes` made; null when it ends up empty. */
async function rewrite(store: Store, source: TreeSource, tree: Digest | null, changes: Change[]): Promise<Digest | null | typeof BLOCKED> {
  const entries = new Map((tree ? (await source(tree)).entries : []).map((e) => [e.name, e]))
  const deeper = new Map<string, Change[]>()
  for (const { parts, entry } of changes) {
    const [name, ...rest] = parts as [string, ...string[]]
    if (rest.length > 0) deeper.set(name, [...(deeper.get(name) ?? []), { parts: rest, entry }])
    else if (entry) entries.set(name, { ...entry, name })
    else entries.delete(name)
  }
  for (const [name, below] of deeper) {
    const dir = entries.get(name)
    if (dir && dir.type !== 'dir') return BLOCKED
    const subtree = await rewrite(store, source, dir?.tree ?? null, below)
    if (subtree === BLOCKED) return BLOCKED
    if (subtree === null) entries.delete(name)
    else entries.set(name, dirEntry(name, subtree))
  }
  return entries.size === 0 ? null : writeTree(store, [...entries.values()])
}

async function writeTree(store: Store, entries: TreeEntry[]): Promise<Digest> {
  const { bytes, digest } = treeObject(entries)
  await store.writeVerified(digest, bytes)
  return digest
}
