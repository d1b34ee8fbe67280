import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { BranchExistsError, UsageError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import type { Lock } from '../../store/lockFile.js'
import type { Store } from '../../store/Store.js'
import { chooseBackend, backendByName } from '../backends/chooseBackend.js'
import { ensureBaseDir } from '../mount/baseDir.js'
import { creationLock } from './creationLock.js'
import { assertBranchName, baseDirPath, liveDir, listStates, newBranchId, readGeneration, writeState } from './branchStore.js'
import { destroyBranch } from './destroyBranch.js'
import { liveState } from './liveBranch.js'
import { parseSize } from '../../sandbox/limits.js'
import { self } from '../../sandbox/processId.js'
import type { BackendName, BranchState } from '../types.js'

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
  /** A directory of the host's file system even though it ends with this process: see `BranchOptions.onHost`. */
  onHost?: boolean
  /** Mount the branch here, in the host's mount namespace (checked by `atBranchPath`). */
  path?: string
  /** Cap what the branch writes: bytes, or a size like "512M" (overlay backend, mounted on the host, as root). */
  disk?: number | string | undefined
}

/**
 * Make a branch: from the workspace, an overlay over the shared base directory of its tree (or
 * a clone of it); from a branch, the same over a frozen copy of that branch's changes
 * stacked on its layers. The state file is written before anything is mounted, so a crash
 * at any point leaves something the next open can clean.
 */
export async function createBranch({ store, name, parent, tree, backend: wanted, persistent = false, onHost = false, path, disk }: CreateBranchArgs): Promise<BranchState> {
  const diskBytes = disk === undefined ? undefined : parseSize(disk, 'disk')
  const parentState = parent === null ? null : await liveState(store, parent)
  const fullName = parentState ? `${parentState.name}/${assertBranchName(name)}` : assertBranchName(name)
  if (parentState && wanted && wanted !== 'auto' && wanted !== parentState.backend) {
    throw new UsageError(`branch ${fullName} must use its parent's backend (${parentState.backend}), not ${wanted}`, { backend: wanted })
  }
  const backend = parentState ? backendByName(parentState.backend) : await chooseBackend(store, wanted, { onHost })
  const baseTree = parentState ? parentState.baseTree : (tree ?? missingTree())
  // a branch of the workspace stands on the base directory of its tree, a branch of a branch on its parent's layers
  const base = parentState ? null : baseDirPath(store, baseTree)
  const state = await register(store, { name: fullName, parent }, (parentGeneration) => ({
    kind: 'branch-state',
    schemaVersion: 1,
    id: newBranchId(),
    name: fullName,
    parent,
    backend: backend.name,
    baseTree,
    // named before the base is made or found: from then on it cannot be taken away
    layers: base ? [base] : [],
    parentGeneration,
    owner: persistent ? null : self,
    holder: null,
    ...(diskBytes === undefined ? {} : { disk: diskBytes }),
    createdAt: new Date().toISOString(),
  }))
  const dir = liveDir(store, state.id)
  try {
    if (base) await ensureBaseDir(store, baseTree)
    if (parentState) state.layers = await backend.freeze(parentState, liveDir(store, parentState.id), join(dir, 'layer'))
    const hostView = backend.hostViewFor({ persistent, onHost, ...(path === undefined ? {} : { path }) })
    if (hostView) {
      state.hostView = hostView
      await writeState(store, state) // before the mount: a crash leaves a mount the next use finds
    }
    Object.assign(state, await backend.create({ dir, layers: state.layers, persistent, hostView, disk: diskBytes }))
    await writeState(store, state)
    return state
  } catch (err) {
    await destroyBranch(store, state)
    throw err
  }
}

/** The state of a branch being made, given the commit count of its parent when registered. */
type Draft = (parentGeneration: number) => BranchState

interface Registration {
  name: string
  parent: string | null
  draft: Draft
  done: (state: BranchState) => void
  failed: (err: unknown) => void
}

/** Registrations of this process waiting for the creation lock, per store: the next holder takes them all. */
const waiting = new Map<string, Registration[]>()

/**
 * Register a branch: its name checked unique among the live ones and its state written,
 * under the creation lock. A base directory is taken away (to be advanced) or pruned only while
 * no registered branch names it, which is decided under the same lock; so a branch
 * registers first and makes or finds its base after. Branches made at once (a fork's, a
 * pattern's) are registered together, with one read of the live states, not one each.
 */
function register(store: Store, { name, parent }: { name: string; parent: string | null }, draft: Draft): Promise<BranchState> {
  return new Promise<BranchState>((done, failed) => {
    let batch = waiting.get(store.root)
    if (!batch) {
      waiting.set(store.root, (batch = []))
      void registerWaiting(store)
    }
    batch.push({ name, parent, draft, done, failed })
  })
}

async function registerWaiting(store: Store): Promise<void> {
  let lock: Lock
  try {
    lock = await creationLock(store)
  } catch (err) {
    for (const r of takeWaiting(store)) r.failed(err)
    return
  }
  const batch = takeWaiting(store) // later arrivals make the next batch, which waits for this lock
  try {
    const names = new Set((await listStates(store)).map((s) => s.name))
    for (const r of batch) {
      try {
        r.done(await writeNewState(store, r, names))
      } catch (err) {
        r.failed(err)
      }
    }
  } catch (err) {
    for (const r of batch) r.failed(err) // a no-op for those already settled
  } finally {
    await lock.release()
  }
}

function takeWaiting(store: Store): Registration[] {
  const batch = waiting.get(store.root) ?? []
  waiting.delete(store.root)
  return batch
}

async function writeNewState(store: Store, { name, parent, draft }: Registration, names: Set<string>): Promise<BranchState> {
  if (names.has(name)) throw new BranchExistsError(`a live branch named ${JSON.stringify(name)} already exists (commit or abort it first)`, { name })
  names.add(name)
  const state = draft(await readGeneration(store, parent))
  await fs.mkdir(liveDir(store, state.id), { recursive: true })
  await writeState(store, state)
  return state
}

function missingTree(): never {
  throw new UsageError('a branch of the workspace needs the workspace tree to start from')
}
