import type { Store } from '../../store/Store.js'
import type { BranchState } from '../types.js'
import { listStates, readState } from './branchStore.js'
import { type ClosingMark, markClosing } from './closingMark.js'
import { destroyBranch } from './destroyBranch.js'

/**
 * Tear a branch and its children down, leaving no mount, process, file or directory. A branch already gone is fine.
 * @throws {BranchBusyError} a command is running in it or one of its children: nothing is torn down
 */
export async function abortBranch({ store, id }: { store: Store; id: string }): Promise<void> {
  const state = await readState(store, id)
  if (state === null) return
  const marks: ClosingMark[] = []
  try {
    for (const branch of [state, ...(await descendants(store, state))]) marks.push(await markClosing(store, branch, 'abort'))
  } catch (err) {
    await Promise.all(marks.map((mark) => mark.clear()))
    throw err
  }
  await destroyBranch(store, state)
}

async function descendants(store: Store, state: BranchState): Promise<BranchState[]> {
  const all = await listStates(store)
  const below = (parent: BranchState): BranchState[] => all.filter((s) => s.parent === parent.id).flatMap((child) => [child, ...below(child)])
  return below(state)
}
