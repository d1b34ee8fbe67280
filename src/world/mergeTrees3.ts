import type { Digest } from '../store/digest.js'
import type { Store } from '../store/Store.js'
import { type TreeEntry, treeObject } from './Tree.js'
import { EMPTY_TREE, type TreeSource, joinPath, sameEntry, zipEntries } from './treeSource.js'

export type MergeResult = { type: 'merged'; tree: Digest } | { type: 'conflict'; paths: string[] }

/**
 * Three-way merge of trees, path by path: where only one side changed a path since the
 * base, that side wins; where both made the same change, it is taken once; where both
 * changed a directory, the merge goes inside it; anything else is a conflict at that
 * path. Merged trees are written to the store; nothing is written when there are conflicts.
 */
export async function mergeTrees3({ store, source, base, ours, theirs }: { store: Store; source: TreeSource; base: Digest | null; ours: Digest; theirs: Digest }): Promise<MergeResult> {
  const conflicts: string[] = []
  const pending: Array<{ digest: Digest; bytes: Buffer }> = []
  const tree = await merge(source, base, ours, theirs, '', conflicts, pending)
  if (conflicts.length > 0) return { type: 'conflict', paths: conflicts }
  for (const { digest, bytes } of pending) await store.writeVerified(digest, bytes)
  return { type: 'merged', tree }
}

async function merge(
  source: TreeSource,
  base: Digest | null,
  ours: Digest,
  theirs: Digest,
  prefix: string,
  conflicts: string[],
  pending: Array<{ digest: Digest; bytes: Buffer }>,
): Promise<Digest> {
  if (ours === theirs || theirs === base) return ours
  if (ours === base) return theirs
  const [b, o, t] = await Promise.all([base ? source(base) : EMPTY_TREE, source(ours), source(theirs)])
  const entries: TreeEntry[] = []
  for (const { name, entries: [be, oe, te] } of zipEntries(b, o, t)) {
    const path = joinPath(prefix, name)
    const picked = pick(be, oe, te)
    if (picked !== 'conflict') {
      if (picked) entries.push(picked)
      continue
    }
    if (oe?.type === 'dir' && te?.type === 'dir') {
      const subBase = be?.type === 'dir' ? be.tree : null
      entries.push({ ...oe, tree: await merge(source, subBase, oe.tree, te.tree, path, conflicts, pending) })
    } else {
      conflicts.push(path)
    }
  }
  const { bytes, digest } = treeObject(entries)
  pending.push({ digest, bytes })
  return digest
}

function pick(base?: TreeEntry, ours?: TreeEntry, theirs?: TreeEntry): TreeEntry | undefined | 'conflict' {
  if (sameEntry(ours, theirs)) return ours
  if (sameEntry(base, ours)) return theirs
  if (sameEntry(base, theirs)) return ours
  return 'conflict'
}
