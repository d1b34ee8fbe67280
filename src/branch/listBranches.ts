import { type WorkspaceRef, openWorkspace } from './openWorkspace.js'
import type { BranchInfo } from './types.js'

/** Every live branch of a workspace, oldest first. */
export async function listBranches(ref: WorkspaceRef): Promise<BranchInfo[]> {
  return (await openWorkspace(ref)).branches()
}
