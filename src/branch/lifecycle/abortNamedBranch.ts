import { findState } from './branchStore.js'
import { abortBranch } from './abortBranch.js'
import type { StoreLocator } from '../../store/findStore.js'
import { Workspace } from '../Workspace.js'

/** Abort a live branch (and its children) by name. @throws {BranchNotFoundError} */
export async function abortNamedBranch({ name, ...ref }: StoreLocator & { name: string }): Promise<{ aborted: string }> {
  const ws = await Workspace.open(ref)
  await abortBranch({ store: ws.store, id: (await findState(ws.store, name)).id })
  return { aborted: name }
}
