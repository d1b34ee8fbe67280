import type { Branch } from '../branch/Branch.js'
import { Workspace } from '../branch/Workspace.js'
import type { Digest } from '../objects/digest.js'
import type { Store } from '../store/Store.js'
import { forkBranchName } from './forkBranch.js'
import type { ForkChild } from './forkImage.js'

/**
 * A copy-on-write branch per child, over the shared base directory of the image's
 * tree (built once, whatever the workspace holds now), made in parallel. If one cannot be
 * made, those that were are aborted and the error is thrown.
 */
export async function materializeChildren({
  dir,
  store,
  tree,
  children,
  persistent,
}: {
  dir?: string | undefined
  store: Store
  tree: Digest
  children: ForkChild[]
  persistent: boolean
}): Promise<ForkChild[]> {
  const ws = await Workspace.open({ dir, store })
  const made = await Promise.allSettled(children.map((c) => ws.branch(forkBranchName(c.ref), { tree, persistent })))
  const failed = made.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failed) {
    await Promise.all(made.filter((r) => r.status === 'fulfilled').map((r) => r.value.abort()))
    throw failed.reason
  }
  const branches = made.map((r) => (r as PromiseFulfilledResult<Branch>).value)
  return children.map((c, i) => ({ ...c, branch: { name: branches[i]!.name, path: branches[i]!.path } }))
}
