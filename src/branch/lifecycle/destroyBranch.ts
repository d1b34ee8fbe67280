import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { Store } from '../../store/Store.js'
import { backendByName } from '../backends/chooseBackend.js'
import { liveDir, listStates } from './branchStore.js'
import { removeTree } from './removeTree.js'
import type { BranchState } from '../types.js'

/**
 * Tear a branch down and remove every trace of it, children first (their layers live in
 * this branch's directory). The state file goes before the rest, so a crash halfway
 * leaves a directory that the next open removes, never a branch that looks alive.
 */
export async function destroyBranch(store: Store, state: BranchState): Promise<void> {
  for (const child of (await listStates(store)).filter((s) => s.parent === state.id)) await destroyBranch(store, child)
  const dir = liveDir(store, state.id)
  await backendByName(state.backend).teardown(state, dir)
  await fs.rm(join(dir, 'state.json'), { force: true })
  await removeTree(dir)
}

/** Remove a branch directory that never got (or already lost) its state file. */
export async function removeHalfMade(dir: string): Promise<void> {
  await removeTree(dir)
}
