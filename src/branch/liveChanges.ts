import type { StoreLocator } from '../store/findStore.js'
import type { BranchChange, BranchInfo } from './types.js'
import { Workspace } from './Workspace.js'

export interface LiveBranch extends BranchInfo {
  /** What the branch changed so far (at most `limit` paths), or null with `unreadable` saying why. */
  changes: BranchChange[] | null
  totalChanges: number
  unreadable: string | null
}

/**
 * Every live branch of a workspace (a pattern's candidates while they run, `forkpoint branch`
 * ones until committed) with the paths it changed so far, oldest first. A branch that ends
 * while it is read, or that this process cannot see into, says so instead of failing the list.
 */
export async function liveChanges({ limit = 200, ...locator }: StoreLocator & { limit?: number } = {}): Promise<LiveBranch[]> {
  const workspace = await Workspace.open(locator)
  return Promise.all(
    (await workspace.branches()).map(async (info) => {
      try {
        const changes = await (await workspace.openBranch(info.name)).changes()
        return { ...info, changes: changes.slice(0, limit), totalChanges: changes.length, unreadable: null }
      } catch (err) {
        return { ...info, changes: null, totalChanges: 0, unreadable: err instanceof Error ? err.message : String(err) }
      }
    }),
  )
}
