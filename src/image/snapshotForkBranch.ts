import type { Branch } from '../branch/Branch.js'
import { assertPutLinksInside } from '../branch/assertPutLinksInside.js'
import { liveState } from '../branch/liveBranch.js'
import { Workspace } from '../branch/Workspace.js'
import { InternalError, ObjectNotFoundError } from '../errors/index.js'
import type { Digest } from '../store/digest.js'
import { readRef, updateRef } from '../store/refs.js'
import type { StoreLocator } from '../store/findStore.js'
import type { Store } from '../store/Store.js'
import { withWriteLock } from '../store/storeLock.js'
import { readSnapshot } from '../world/readObjects.js'
import { scanPaths } from '../world/scanPaths.js'
import type { Snapshot, SnapshotLayer } from '../world/Snapshot.js'
import { spliceTree } from '../world/spliceTree.js'
import { respectGitignore } from '../world/workspaceConfig.js'
import { forkRefOfBranch } from './forkBranch.js'

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
    await store.sync() // the tree's and the snapshot's objects, before the ref names them
    await updateRef({ store, name: ref, id, expected: head, message: `snapshot: ${meta.message}` })
    return { id, tree, parents: snapshot.parents, ref, created: true }
  })
}

/** The branch's files as a tree: its base tree with the paths it changed scanned and spliced in. */
async function branchTree(store: Store, branch: Branch, allowExternalSymlinks: boolean): Promise<Digest> {
  const { baseTree } = await liveState(store, branch.id)
  const changes = await branch.changes()
  if (!allowExternalSymlinks) await assertPutLinksInside(branch.path, changes)
  // a deleted path is absent from the branch: scanPaths maps it to null
  const entries = await scanPaths({ store, dir: branch.path, paths: changes.map((c) => c.path), respectGitignore: await respectGitignore(store, undefined, { remember: false }) })
  const tree = await spliceTree(store, baseTree, entries)
  if (tree === null) throw new InternalError(`branch ${branch.name}: a changed path lies under no directory of its base tree`)
  return tree
}
