import { openStore, type StoreLocator } from '../store/findStore.js'
import type { Change } from '../world/diffTrees.js'
import { status } from '../world/status.js'
import { backendByName } from './backends/chooseBackend.js'
import { liveDir, listStates } from './branchStore.js'
import { collectChanges } from './collectChanges.js'
import { basePath, branchInfo, viewPath } from './liveBranch.js'
import { type RunningSandbox, runningSandboxes } from './runningSandboxes.js'
import type { BranchChange, BranchInfo, BranchState } from './types.js'
import type { Store } from '../store/Store.js'

export interface LiveBranch extends BranchInfo {
  /** Sandboxed commands running in it now. */
  running: RunningSandbox[]
  /** What the branch changed so far (at most `limit` paths), or null with `unreadable` saying why. */
  changes: BranchChange[] | null
  totalChanges: number
  unreadable: string | null
}

/**
 * Every live branch of a workspace (a pattern's candidates while they run, `forkpoint branch`
 * ones until committed) with the paths it changed so far, oldest first. Only reads: unlike
 * `Workspace.open`, it cleans nothing up and mounts nothing again, so a branch whose view is
 * gone, that ends while it is read, or that this process cannot see into says so instead.
 */
export async function liveChanges({ limit = 200, ...locator }: StoreLocator & { limit?: number } = {}): Promise<LiveBranch[]> {
  const { store } = await openStore(locator)
  const [states, sandboxes] = await Promise.all([listStates(store), runningSandboxes(store)])
  return Promise.all(
    states.map(async (state) => {
      const info = { ...branchInfo(store, state, states), running: sandboxes.filter((s) => s.branch === state.name) }
      try {
        const changes = await changesOf(store, state)
        return { ...info, changes: changes.slice(0, limit), totalChanges: changes.length, unreadable: null }
      } catch (err) {
        return { ...info, changes: null, totalChanges: 0, unreadable: err instanceof Error ? err.message : String(err) }
      }
    }),
  )
}

/** Sandboxed commands running in the workspace itself, and while any does, the workspace's changes since HEAD (at most `limit` paths). */
export interface WorkspaceSandboxes {
  running: RunningSandbox[]
  changes: Change[] | null
  totalChanges: number
}

export async function workspaceSandboxes({ limit = 200, ...locator }: StoreLocator & { limit?: number } = {}): Promise<WorkspaceSandboxes> {
  const { store } = await openStore(locator)
  const running = (await runningSandboxes(store)).filter((s) => s.branch === null)
  if (running.length === 0) return { running, changes: null, totalChanges: 0 }
  const { changes } = await status(locator)
  return { running, changes: changes.slice(0, limit), totalChanges: changes.length }
}

/** `Branch.changes` without reviving the branch's mount. */
function changesOf(store: Store, state: BranchState): Promise<BranchChange[]> {
  const candidates = backendByName(state.backend).changeCandidates(liveDir(store, state.id))
  return collectChanges({ view: viewPath(store, state), base: basePath(store, state), candidates })
}
