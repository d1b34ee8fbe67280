import type { Digest } from '../store/digest.js'
import { resolveId } from '../store/resolveId.js'
import { type Change, diffTrees } from './diffTrees.js'
import { readSnapshot } from './readObjects.js'
import { scanWorkspace } from './scanWorkspace.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { treeSource } from './treeSource.js'

export interface SnapshotDiff {
  a: Digest
  /** The second snapshot, or null for the workspace as it is now. */
  b: Digest | null
  changes: Change[]
  summary: { added: number; deleted: number; modified: number; mode: number; typechange: number }
}

/** File-level differences between two snapshots, or between one and the workspace. */
export async function diffSnapshots(args: StoreLocator & { a: string; b?: string }): Promise<SnapshotDiff> {
  const { store, workspace } = await openStore(args)
  const a = await resolveId(store, args.a)
  const aTree = (await readSnapshot(store, a)).world.tree
  let b: Digest | null = null
  let bTree: Digest
  let source = treeSource(store)
  if (args.b) {
    b = await resolveId(store, args.b)
    bTree = (await readSnapshot(store, b)).world.tree
  } else {
    const scan = await scanWorkspace({ store, dir: workspace, write: false })
    bTree = scan.tree
    source = treeSource(store, scan.trees)
  }
  const changes = await diffTrees({ source, a: aTree, b: bTree })
  const summary = { added: 0, deleted: 0, modified: 0, mode: 0, typechange: 0 }
  for (const c of changes) summary[c.status]++
  return { a, b, changes, summary }
}
