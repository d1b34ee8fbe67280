import { branchTree } from '../branch/lifecycle/branchTree.js'
import { Workspace } from '../branch/Workspace.js'
import { ObjectNotFoundError } from '../errors/index.js'
import type { Digest } from '../objects/digest.js'
import { readRef, updateRef } from '../store/refs.js'
import type { StoreLocator } from '../store/findStore.js'
import { withWriteLock } from '../store/storeLock.js'
import { readSnapshot } from '../world/tree/readObjects.js'
import type { Snapshot, SnapshotLayer } from '../objects/Snapshot.js'
import { forkRefOfBranch } from './forkBranch.js'
import { inheritElsewhere } from '../world/checkout/cameFromElsewhere.js'

export interface SnapshotForkBranchArgs extends StoreLocator {
  /** The fork's branch (`fork-<id>-<index>`, as `forkImage({ materialize })` names it). */
  branch: string
  message?: string
  agent?: string
  /** Record symlinks that lead out of the branch (refused otherwise). */
  allowExternalSymlinks?: boolean
  /** Layers the new image sets (a trace, say); the others carry over from the child's last image. */
  layers?: Partial<Record<SnapshotLayer, Digest>>
}

export interface SnapshotForkBranchResult {
  id: Digest
  tree: Digest
  parents: Digest[]
  /** The child's ref, moved to `id`. */
  ref: string
  /** False when the branch holds what the child's ref already names: nothing written. */
  created: boolean
}

/**
 * Snapshot a fork's materialized branch as the next image of that child: its parent is
 * what the child's ref names, its world the branch's files, every other layer carried;
 * the ref moves to it (compare-and-swap). Only what the branch changed is read: its
 * tree is the base tree with those paths spliced in. The branch stays live.
 * @throws {UsageError} not a fork's branch @throws {BranchNotFoundError} @throws {InputNotFoundError} the child's ref is gone
 * @throws {UnsafePathError} a symlink the branch put leads out @throws {RefConflictError} the ref moved meanwhile
 */
export async function snapshotForkBranch({
  dir,
  store: storeArg,
  branch: name,
  message,
  agent,
  allowExternalSymlinks = false,
  layers = {},
}: SnapshotForkBranchArgs): Promise<SnapshotForkBranchResult> {
  const ref = forkRefOfBranch(name)
  const ws = await Workspace.open({ dir, store: storeArg })
  const branch = await ws.openBranch(name)
  const store = ws.store
  return withWriteLock(store, async () => {
    const tree = await branchTree(store, branch, allowExternalSymlinks)
    const head = await readRef(store, ref)
    if (head === null) throw new ObjectNotFoundError(`${ref}, the ref of branch ${name}'s child, no longer exists`, { name: ref })
    const parent = await readSnapshot(store, head)
    const sameLayers = Object.entries(layers).every(([layer, id]) => parent[layer] === id)
    if (parent.world.tree === tree && sameLayers) return { id: head, tree, parents: parent.parents, ref, created: false }
    const meta: Snapshot['meta'] = { message: message ?? `snapshot of branch ${name}`, createdAt: new Date().toISOString(), ...(agent ? { agent } : {}) }
    const snapshot: Snapshot = { ...parent, ...layers, parents: [head], world: { ...parent.world, tree }, meta }
    const id = await store.writeObject(snapshot)
    await inheritElsewhere(store, head, id) // the branch stood on the child's world: its git files are the parent's
    await store.sync() // the tree's and the snapshot's objects, before the ref names them
    await updateRef({ store, name: ref, id, expected: head, message: `snapshot: ${meta.message}` })
    return { id, tree, parents: snapshot.parents, ref, created: true }
  })
}
