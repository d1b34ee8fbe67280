import { type WorkspaceRef, openWorkspace } from './openWorkspace.js'
import type { CommitResult, ConflictPolicy } from './types.js'

/** Commit a live branch by name. @throws {BranchNotFoundError} @throws {ConflictError} @throws {BranchStaleError} */
export async function commitNamedBranch({ name, onConflict, ...ref }: WorkspaceRef & { name: string; onConflict?: ConflictPolicy }): Promise<CommitResult> {
  const branch = await (await openWorkspace(ref)).openBranch(name)
  return branch.commit({ onConflict })
}
