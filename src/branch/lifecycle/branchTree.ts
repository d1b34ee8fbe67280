import { InternalError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { scanPaths } from '../../world/scan/scanPaths.js'
import { spliceTree } from '../../world/tree/spliceTree.js'
import { keepTrustedGit } from '../../world/checkout/keepTrustedGit.js'
import { respectGitignore } from '../../world/workspace/workspaceConfig.js'
import { gitRunPathsOf } from '../commit/gitRunPathsOf.js'
import { heldBackWith } from '../../world/checkout/heldBackGitPath.js'
import { assertPutLinksInside } from '../commit/assertPutLinksInside.js'
import { refuseOutOfReach } from '../commit/refuseOutOfReach.js'
import type { Branch } from '../Branch.js'
import { liveState } from './liveBranch.js'

/**
 * A live branch's files as a tree, written to the store: its base tree with the paths it
 * changed scanned and spliced in (only those are read). What git would run that the branch
 * wrote is held back as its commit holds it back (`keepTrustedGit`, with what the workspace's
 * git configuration runs): the base's entry stays, so an image of a branch carries no hook or
 * git config its sandboxed work made.
 * @throws {UnsafePathError} a symlink the branch put leads out (unless allowed)
 * @throws {PathLimitError} a path the branch put is out of reach of an image (`refuseOutOfReach`)
 */
export async function branchTree(store: Store, branch: Branch, allowExternalSymlinks: boolean): Promise<Digest> {
  const { baseTree } = await liveState(store, branch.id)
  const changes = await branch.changes()
  await refuseOutOfReach('snapshot', changes, [branch.path])
  if (!allowExternalSymlinks) await assertPutLinksInside(branch.path, changes)
  // a deleted path is absent from the branch: scanPaths maps it to null
  const entries = await scanPaths({ store, dir: branch.path, paths: changes.map((c) => c.path), respectGitignore: await respectGitignore(store, undefined, { remember: false }) })
  const tree = await spliceTree(store, baseTree, entries)
  if (tree === null) throw new InternalError(`branch ${branch.name}: a changed path lies under no directory of its base tree`)
  return (await keepTrustedGit(store, baseTree, tree, heldBackWith(await gitRunPathsOf(branch.workspace.dir, changes)))).tree
}
