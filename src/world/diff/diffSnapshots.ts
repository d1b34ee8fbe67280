import type { Digest } from '../../objects/digest.js'
import { resolveId } from '../../store/resolveId.js'
import type { Store } from '../../store/Store.js'
import { type Change, diffTrees } from './diffTrees.js'
import { readSnapshot } from '../tree/readObjects.js'
import { scanWorkspace } from '../scan/scanWorkspace.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import { type TreeSource, treeSource } from '../tree/treeSource.js'

export interface SnapshotDiff {
  a: Digest
  /** The second snapshot, or null for the workspace as it is now. */
  b: Digest | null
  changes: Change[]
  summary: { added: number; deleted: number; modified: number; mode: number; typechange: number }
}

/** What a diff compares: two snapshots' trees, or one's and the workspace's as scanned now (`b` null). */
export interface DiffSides {
  store: Store
  workspace: string
  a: Digest
  b: Digest | null
  aTree: Digest
  bTree: Digest
  /** Knows the trees of both sides, the workspace's held in memory. */
  source: TreeSource
}

/** File-level differences between two snapshots, or between one and the workspace. */
export async function diffSnapshots(args: StoreLocator & { a: string; b?: string | undefined }): Promise<SnapshotDiff> {
  return diffOfSides(await diffSides(args))
}

/** The file-level differences of sides already resolved. */
export async function diffOfSides({ a, b, aTree, bTree, source }: DiffSides): Promise<SnapshotDiff> {
  const changes = await diffTrees({ source, a: aTree, b: bTree })
  const summary = { added: 0, deleted: 0, modified: 0, mode: 0, typechange: 0 }
  for (const c of changes) summary[c.status]++
  return { a, b, changes, summary }
}

/** Resolve both sides of a diff: `b` absent is the workspace, scanned without writing to the store. */
export async function diffSides(args: StoreLocator & { a: string; b?: string | undefined }): Promise<DiffSides> {
  const { store, workspace } = await openStore(args)
  const a = await resolveId(store, args.a)
  const aTree = (await readSnapshot(store, a)).world.tree
  if (args.b) {
    const b = await resolveId(store, args.b)
    return { store, workspace, a, b, aTree, bTree: (await readSnapshot(store, b)).world.tree, source: treeSource(store) }
  }
  const scan = await scanWorkspace({ store, dir: workspace, write: false })
  return { store, workspace, a, b: null, aTree, bTree: scan.tree, source: treeSource(store, scan.trees) }
}
