import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { BranchExistsError, UsageError } from '../errors/index.js'
import type { Digest } from '../store/digest.js'
import type { Lock } from '../store/lockFile.js'
import type { Store } from '../store/Store.js'
import { chooseBackend, backendByName } from './backends/chooseBackend.js'
import { ensureBaseView } from './baseView.js'
import { creationLock } from './creationLock.js'
import { exists } from '../util/fsx.js'
import { assertBranchName, liveDir, listStates, newBranchId, readGeneration, writeState } from './branchStore.js'
import { destroyBranch } from './destroyBranch.js'
import { liveState } from './liveBranch.js'
import { self } from '../sandbox/processId.js'
import type { BackendName, BranchState } from './types.js'

export interface CreateBranchArgs {
  store: Store
  name: string
  /** The parent branch's id, or null to branch the workspace. */
  parent: string | null
  /** The workspace tree to start from (only for a branch of the workspace). */
  tree?: Digest
  backend?: BackendName | 'auto'
  /** Live until commit or abort even after this process exits (the CLI's branches). */
  persistent?: boolean
  /** Mount the branch here, in the host's mount namespace (checked by `atBranchPath`). */
  path?: string
}

/**
 * Make a branch: from the workspace, an overlay over the shared base view of its tree (or
 * a clone of it); from a branch, the same over a frozen copy of that branch's changes
 * stacked on its layers. The state file is written before anything is mounted, so a crash
 * at any point leaves something the next open can clean.
 */
export async function createBranch({ store, name, parent, tree, backend: wanted, persistent = false, path }: CreateBranchArgs): Promise<BranchState> {
  const parentState = parent === null ? null : await liveState(store, parent)
  const fullName = parentState ? `${parentState.name}/${assertBranchName(name)}` : assertBranchName(name)
  if (parentState && wanted && wanted !== 'auto' && wanted !== parentState.backend) {
    throw new UsageError(`branch ${fullName} must use its parent's backend (${parentState.backend}), not ${wanted}`, { backend: wanted })
  }
  const backend = parentState ? backendByName(parentState.backend) : await chooseBackend(store, wanted)
  const id = newBranchId()
  const dir = liveDir(store, id)
  const { lock, baseLayers } = await lockWithBase(store, parentState ? null : (tree ?? missingTree()))
  let state: BranchState
  try {
    if ((await listStates(store)).some((s) => s.name === fullName)) {
      throw new BranchExistsError(`a live branch named ${JSON.stringify(fullName)} already exists (commit or abort it first)`, { name: fullName })
    }
    await fs.mkdir(dir, { recursive: true })
    state = {
      kind: 'branch-state',
      schemaVersion: 1,
      id,
      name: fullName,
      parent,
      backend: backend.name,
      baseTree: parentState?.baseTree ?? tree!,
      layers: baseLayers ?? [],
      parentGeneration: await readGeneration(store, parent),
      owner: persistent ? null : self,
      holder: null,
      createdAt: new Date().toISOString(),
    }
    await writeState(store, state)
  } finally {
    await lock.release()
  }
  try {
    if (parentState) state.layers = await backend.freeze(parentState, liveDir(store, parentState.id), join(dir, 'layer'))
    const hostView = backend.hostViewFor({ persistent, ...(path === undefined ? {} : { path }) })
    if (hostView) {
      state.hostView = hostView
      await writeState(store, state) // before the mount: a crash leaves a mount the next use finds
    }
    Object.assign(state, await backend.create({ dir, layers: state.layers, persistent, hostView }))
    await writeState(store, state)
    return state
  } catch (err) {
    await destroyBranch(store, state)
    throw err
  }
}

/**
 * The creation lock, with the base view of `tree` (when branching the workspace) checked
 * to exist under it: a view can be taken away to be advanced to a newer tree only while
 * no branch is registered on it, which is decided under the same lock.
 */
async function lockWithBase(store: Store, tree: Digest | null): Promise<{ lock: Lock; baseLayers: string[] | null }> {
  for (;;) {
    const view = tree === null ? null : await ensureBaseView(store, tree)
    const lock = await creationLock(store)
    if (view === null || (await exists(view))) return { lock, baseLayers: view === null ? null : [view] }
    await lock.release()
  }
}

function missingTree(): never {
  throw new UsageError('a branch of the workspace needs the workspace tree to start from')
}
