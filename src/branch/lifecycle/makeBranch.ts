import type { StoreLocator } from '../../store/findStore.js'
import { Workspace } from '../Workspace.js'
import type { BackendName, BranchInfo } from '../types.js'

/**
 * Make a persistent branch (it outlives this process; `commitNamedWithEffects` or
 * `abortNamedBranch` ends it). `a/b` makes `b` as a branch of the live branch `a`.
 * @throws {BranchExistsError} @throws {BranchNotFoundError} the parent @throws {BackendUnavailableError}
 */
export async function makeBranch({
  name,
  backend,
  path,
  disk,
  ...ref
}: StoreLocator & { name: string; backend?: BackendName | 'auto'; path?: string; disk?: number | string }): Promise<BranchInfo> {
  const ws = await Workspace.open(ref)
  const cut = name.lastIndexOf('/')
  const parent = cut < 0 ? ws : await ws.openBranch(name.slice(0, cut))
  const branch = await parent.branch(name.slice(cut + 1), { backend, persistent: true, ...(path === undefined ? {} : { path }), ...(disk === undefined ? {} : { disk }) })
  return (await ws.branches()).find((b) => b.name === branch.name)!
}
