import type { Digest } from '../../objects/digest.js'
import type { Tree, TreeEntry } from '../../objects/Tree.js'
import { EMPTY_TREE, type TreeSource, entryId, joinPath, sameEntry, zipEntries } from '../tree/treeSource.js'

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

/** A change with the entries themselves (their content ids), for a caller that reads the content. */
export interface EntryChange {
  path: string
  status: ChangeStatus
  old?: TreeEntry
  new?: TreeEntry
}

/**
 * Path-level differences between two trees: files and symlinks, plus directories that are
 * empty on the side where they exist (a non-empty one shows through its contents).
 * Unchanged subtrees share an id and are skipped without being read.
 */
export async function diffTrees(args: { source: TreeSource; a: Digest | null; b: Digest | null }): Promise<Change[]> {
  const changes: Change[] = []
  for await (const c of changedEntries(args)) changes.push(withInfo(c))
  return changes
}

/** The changes of `diffTrees` one by one, in path order, each with its entries. */
export async function* changedEntries({ source, a, b }: { source: TreeSource; a: Digest | null; b: Digest | null }): AsyncGenerator<EntryChange> {
  if (a !== b) yield* walk(source, a ? await source(a) : EMPTY_TREE, b ? await source(b) : EMPTY_TREE, '')
}

async function* walk(source: TreeSource, a: Tree, b: Tree, prefix: string): AsyncGenerator<EntryChange> {
  for (const { name, entries } of zipEntries(a, b)) {
    const [x, y] = entries
    if (sameEntry(x, y)) continue
    const path = joinPath(prefix, name)
    if (x?.type === 'dir' && y?.type === 'dir') {
      yield* walk(source, await source(x.tree), await source(y.tree), path)
    } else if (x && y && x.type !== 'dir' && y.type !== 'dir') {
      const status = x.type !== y.type ? 'typechange' : contentEqual(x, y) ? 'mode' : 'modified'
      yield { path, status, old: x, new: y }
    } else {
      // a directory appeared where something else was, or vanished: its contents are the changes
      if (x) yield* sideOnly(source, x, path, 'deleted')
      if (y) yield* sideOnly(source, y, path, 'added')
    }
  }
}

async function* sideOnly(source: TreeSource, e: TreeEntry, path: string, status: 'added' | 'deleted'): AsyncGenerator<EntryChange> {
  const tree = e.type === 'dir' ? await source(e.tree) : null
  if (!tree || tree.entries.length === 0) {
    yield status === 'added' ? { path, status, new: e } : { path, status, old: e }
    return
  }
  for (const child of tree.entries) yield* sideOnly(source, child, joinPath(path, child.name), status)
}

function withInfo(c: EntryChange): Change {
  return { path: c.path, status: c.status, ...(c.old ? { old: info(c.old) } : {}), ...(c.new ? { new: info(c.new) } : {}) }
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
