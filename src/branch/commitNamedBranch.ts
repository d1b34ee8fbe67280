import type { StoreLocator } from '../store/findStore.js'
import { Workspace } from './Workspace.js'
import type { CommitResult, ConflictPolicy } from './types.js'

/** Commit a live branch by name. @throws {BranchNotFoundError} @throws {ConflictError} @throws {BranchStaleError} */
export async function commitNamedBranch({ name, onConflict, ...ref }: StoreLocator & { name: string; onConflict?: ConflictPolicy }): Promise<CommitResult> {
  const branch = await (await Workspace.open(ref)).openBranch(name)
  return branch.commit({ onConflict })
}
