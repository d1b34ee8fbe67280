import type { Store } from '../../store/Store.js'
import { readState } from './branchStore.js'
import { destroyBranch } from './destroyBranch.js'

/** Tear a branch and its children down, leaving no mount, process, file or directory. A branch already gone is fine. */
export async function abortBranch({ store, id }: { store: Store; id: string }): Promise<void> {
  const state = await readState(store, id)
  if (state) await destroyBranch(store, state)
}
