import type { Store } from '../../store/Store.js'
import { backendByName } from '../backends/chooseBackend.js'
import { liveDir, readState, writeState } from './branchStore.js'
import { throughHolder } from '../mount/overlayMount.js'
import { collectChanges } from '../commit/collectChanges.js'
import type { BranchChange, BranchInfo, BranchState } from '../types.js'
import { BranchNotFoundError } from '../../errors/index.js'

/**
 * A branch's state with its view mounted: a persistent branch whose holder died or whose
 * mount went away (a reboot) is mounted again from its upper layer, which kept every change.
 */
export async function liveState(store: Store, id: string): Promise<BranchState> {
  const state = await readState(store, id)
  if (!state) throw new BranchNotFoundError(`branch ${id} is no longer live (committed or aborted)`, { id })
  const holder = await backendByName(state.backend).revive(state, liveDir(store, id))
  if (holder?.pid === state.holder?.pid && holder?.start === state.holder?.start) return state
  const revived = { ...state, holder }
  await writeState(store, revived)
  return revived
}

/** The branch's writable view as this process sees it. */
export function viewPath(store: Store, state: BranchState): string {
  return throughHolder(state.holder, backendByName(state.backend).viewMount(state, liveDir(store, state.id)))
}

/** The read-only base the branch started from, as one directory. */
export function basePath(store: Store, state: BranchState): string {
  const dir = liveDir(store, state.id)
  const base = backendByName(state.backend).base(state, dir)
  return base.startsWith(dir) ? throughHolder(state.holder, base) : base
}

/** What a branch changed so far, against the base it started from. */
export function branchChanges(store: Store, state: BranchState): Promise<BranchChange[]> {
  const candidates = backendByName(state.backend).changeCandidates(liveDir(store, state.id))
  return collectChanges({ view: viewPath(store, state), base: basePath(store, state), candidates })
}

/** Where a branch's changes go when it commits: the workspace, or its parent branch's view. */
export async function parentView(store: Store, workspace: string, parent: string | null): Promise<string> {
  if (parent === null) return workspace
  return viewPath(store, await liveState(store, parent))
}

/** What `branches()` says of a live branch; `states` are every live branch's (to name its parent). */
export function branchInfo(store: Store, state: BranchState, states: BranchState[]): BranchInfo {
  return {
    name: state.name,
    path: viewPath(store, state),
    parent: state.parent === null ? null : (states.find((p) => p.id === state.parent)?.name ?? null),
    backend: state.backend,
    persistent: state.owner === null,
    view: state.holder === null ? 'host' : 'namespace',
    createdAt: state.createdAt,
  }
}
