import { findState } from './branchStore.js'
import { abortBranch } from './abortBranch.js'
import { type WorkspaceRef, openWorkspace } from './openWorkspace.js'

/** Abort a live branch (and its children) by name. @throws {BranchNotFoundError} */
export async function abortNamedBranch({ name, ...ref }: WorkspaceRef & { name: string }): Promise<{ aborted: string }> {
  const ws = await openWorkspace(ref)
  await abortBranch({ store: ws.store, id: (await findState(ws.store, name)).id })
  return { aborted: name }
}
