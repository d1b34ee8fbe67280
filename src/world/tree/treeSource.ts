import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { readTree } from './readObjects.js'
import type { Tree, TreeEntry } from '../../objects/Tree.js'

/** Where trees come from: the store, optionally with trees a scan holds only in memory first. */
export type TreeSource = (digest: Digest) => Promise<Tree>

export function treeSource(store: Store, inMemory?: Map<Digest, Tree>): TreeSource {
  return async (digest) => inMemory?.get(digest) ?? readTree(store, digest)
}

export const EMPTY_TREE: Tree = { kind: 'tree', schemaVersion: 1, entries: [] }

/** The entries of several trees side by side, by name, in sorted order. */
export function zipEntries(...trees: Tree[]): Array<{ name: string; entries: Array<TreeEntry | undefined> }> {
  const names = new Set<string>()
  for (const t of trees) for (const e of t.entries) names.add(e.name)
  const maps = trees.map((t) => new Map(t.entries.map((e) => [e.name, e])))
  return [...names].sort().map((name) => ({ name, entries: maps.map((m) => m.get(name)) }))
}

/** Two entries describe the same thing (same type, mode, content or target or subtree). */
export function sameEntry(a: TreeEntry | undefined, b: TreeEntry | undefined): boolean {
  if (!a || !b) return a === b
  if (a.type !== b.type || a.mode !== b.mode) return false
  return entryId(a) === entryId(b)
}

/** What identifies an entry's content: its blob, chunks, subtree or link target. */
export function entryId(e: TreeEntry): string {
  switch (e.type) {
    case 'file':
      return 'blob' in e ? e.blob : e.chunks
    case 'dir':
      return e.tree
    case 'symlink':
      return `->${e.target}`
  }
}

export function joinPath(prefix: string, name: string): string {
  return prefix ? `${prefix}/${name}` : name
}
