import type { Digest } from '../store/digest.js'
import type { Tree, TreeEntry } from './Tree.js'
import { EMPTY_TREE, type TreeSource, entryId, joinPath, sameEntry, zipEntries } from './treeSource.js'

export type ChangeStatus = 'added' | 'deleted' | 'modified' | 'mode' | 'typechange'

/** One side of a change: what the path was (or became). */
export interface EntryInfo {
  type: TreeEntry['type']
  mode: number
  size: number
  /** Link target, for symlinks. */
  target?: string
}

export interface Change {
  path: string
  status: ChangeStatus
  old?: EntryInfo
  new?: EntryInfo
}

/**
 * Path-level differences between two trees: files and symlinks, plus directories that are
 * empty on the side where they exist (a non-empty one shows through its contents).
 * Unchanged subtrees share an id and are skipped without being read.
 */
export async function diffTrees({ source, a, b }: { source: TreeSource; a: Digest | null; b: Digest | null }): Promise<Change[]> {
  const changes: Change[] = []
  if (a !== b) await walk(source, a ? await source(a) : EMPTY_TREE, b ? await source(b) : EMPTY_TREE, '', changes)
  return changes
}

async function walk(source: TreeSource, a: Tree, b: Tree, prefix: string, out: Change[]): Promise<void> {
  for (const { name, entries } of zipEntries(a, b)) {
    const [x, y] = entries
    if (sameEntry(x, y)) continue
    const path = joinPath(prefix, name)
    if (x?.type === 'dir' && y?.type === 'dir') {
      await walk(source, await source(x.tree), await source(y.tree), path, out)
    } else if (x && y && x.type !== 'dir' && y.type !== 'dir') {
      const status = x.type !== y.type ? 'typechange' : contentEqual(x, y) ? 'mode' : 'modified'
      out.push({ path, status, old: info(x), new: info(y) })
    } else {
      // a directory appeared where something else was, or vanished: its contents are the changes
      if (x) await sideOnly(source, x, path, 'deleted', out)
      if (y) await sideOnly(source, y, path, 'added', out)
    }
  }
}

async function sideOnly(source: TreeSource, e: TreeEntry, path: string, status: 'added' | 'deleted', out: Change[]): Promise<void> {
  if (e.type !== 'dir') {
    out.push(status === 'added' ? { path, status, new: info(e) } : { path, status, old: info(e) })
    return
  }
  const tree = await source(e.tree)
  if (tree.entries.length === 0) {
    out.push(status === 'added' ? { path, status, new: info(e) } : { path, status, old: info(e) })
    return
  }
  for (const child of tree.entries) await sideOnly(source, child, joinPath(path, child.name), status, out)
}

function contentEqual(x: TreeEntry, y: TreeEntry): boolean {
  return x.type === y.type && entryId(x) === entryId(y)
}

function info(e: TreeEntry): EntryInfo {
  return e.type === 'symlink' ? { type: e.type, mode: e.mode, size: e.size, target: e.target } : { type: e.type, mode: e.mode, size: e.size }
}

/**
 * What turns tree `a` into tree `b` entry by entry, as few and as high up as can be: each
 * path whose entry differs (b's entry, or null where b has none), a directory standing for
 * all below it unless both sides have one there. Unchanged subtrees are skipped unread.
 */
export async function replacedEntries({ source, a, b }: { source: TreeSource; a: Digest; b: Digest }): Promise<Map<string, TreeEntry | null>> {
  const out = new Map<string, TreeEntry | null>()
  const walkReplaced = async (x: Tree, y: Tree, prefix: string): Promise<void> => {
    for (const { name, entries } of zipEntries(x, y)) {
      const [before, after] = entries
      if (sameEntry(before, after)) continue
      const path = joinPath(prefix, name)
      if (before?.type === 'dir' && after?.type === 'dir') await walkReplaced(await source(before.tree), await source(after.tree), path)
      else out.set(path, after ?? null)
    }
  }
  if (a !== b) await walkReplaced(await source(a), await source(b), '')
  return out
}
