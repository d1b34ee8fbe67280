import type { StoreLocator } from '../../store/findStore.js'
import { Workspace } from '../Workspace.js'
import type { BranchInfo } from '../types.js'

/** Every live branch of a workspace, oldest first. */
export async function listBranches(ref: StoreLocator): Promise<BranchInfo[]> {
  return (await Workspace.open(ref)).branches()
}
