import { openStore, type StoreLocator } from '../../store/findStore.js'
import type { Change } from '../../world/diff/diffTrees.js'
import { status } from '../../world/workspace/status.js'
import { listStates } from '../lifecycle/branchStore.js'
import { branchChanges, branchInfo } from '../lifecycle/liveBranch.js'
import { type RunningSandbox, runningSandboxes } from './runningSandboxes.js'
import type { BranchChange, BranchInfo } from '../types.js'

export interface LiveBranch extends BranchInfo {
  /** Sandboxed commands running in it now. */
  running: RunningSandbox[]
  /** What the branch changed so far (at most `limit` paths), or null with `unreadable` saying why. */
  changes: BranchChange[] | null
  totalChanges: number
  unreadable: string | null
}

/** Sandboxed commands running in the workspace itself, and while any does, the workspace's changes since HEAD (at most `limit` paths). */
export interface WorkspaceSandboxes {
  running: RunningSandbox[]
  changes: Change[] | null
  totalChanges: number
}

/**
 * What is at work in a workspace now: every live branch (a pattern's candidates while they
 * run, `forkpoint branch` ones until committed), oldest first, with the paths it changed
 * so far and the sandboxed commands running in it; and the commands running sandboxed in
 * the workspace itself, with its changes since HEAD. Only reads: unlike `Workspace.open`,
 * it cleans nothing up and mounts nothing again, so a branch whose view is gone, that ends
 * while it is read, or that this process cannot see into says so instead.
 */
export async function liveWork({ limit = 200, ...locator }: StoreLocator & { limit?: number } = {}): Promise<{ branches: LiveBranch[]; workspace: WorkspaceSandboxes }> {
  const { store } = await openStore(locator)
  const [states, sandboxes] = await Promise.all([listStates(store), runningSandboxes(store)])
  const branches = await Promise.all(
    states.map(async (state): Promise<LiveBranch> => {
      const info = { ...branchInfo(store, state, states), running: sandboxes.filter((s) => s.branch === state.name) }
      try {
        const changes = await branchChanges(store, state)
        return { ...info, changes: changes.slice(0, limit), totalChanges: changes.length, unreadable: null }
      } catch (err) {
        return { ...info, changes: null, totalChanges: 0, unreadable: err instanceof Error ? err.message : String(err) }
      }
    }),
  )
  const running = sandboxes.filter((s) => s.branch === null)
  if (running.length === 0) return { branches, workspace: { running, changes: null, totalChanges: 0 } }
  const { changes } = await status({ ...locator, store, readOnly: true })
  return { branches, workspace: { running, changes: changes.slice(0, limit), totalChanges: changes.length } }
}
