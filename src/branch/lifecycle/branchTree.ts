import { InternalError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import type { TreeEntry } from '../../objects/Tree.js'
import { isHeldBackGitPath } from '../../world/checkout/heldBackGitPath.js'
import { holdBackGit } from '../../world/checkout/holdBackGit.js'
import { entryAt } from '../../world/tree/entryAt.js'
import { type TreeSource, treeSource } from '../../world/tree/treeSource.js'
import type { Store } from '../../store/Store.js'
import { scanPaths } from '../../world/scan/scanPaths.js'
import { spliceTree } from '../../world/tree/spliceTree.js'
import { respectGitignore } from '../../world/workspace/workspaceConfig.js'
import { assertPutLinksInside } from '../commit/assertPutLinksInside.js'
import type { Branch } from '../Branch.js'
import { liveState } from './liveBranch.js'

/**
 * A live branch's files as a tree, written to the store: its base tree with the paths it
 * changed scanned and spliced in (only those are read). What git would run that the branch
 * wrote (`isHeldBackGitPath`) is held back as its commit holds it back: the base's entry
 * stays, so an image of a branch carries no hook or git config its sandboxed work made.
 * @throws {UnsafePathError} a symlink the branch put leads out (unless allowed)
 */
export async function branchTree(store: Store, branch: Branch, allowExternalSymlinks: boolean): Promise<Digest> {
  const { baseTree } = await liveState(store, branch.id)
  const changes = await branch.changes()
  if (!allowExternalSymlinks) await assertPutLinksInside(branch.path, changes)
  // a deleted path is absent from the branch: scanPaths maps it to null
  const entries = await scanPaths({ store, dir: branch.path, paths: changes.map((c) => c.path), respectGitignore: await respectGitignore(store, undefined, { remember: false }) })
  const source = treeSource(store)
  const kept = new Map<string, TreeEntry | null>()
  for (const [path, entry] of entries) kept.set(path, entry && (await withoutGitToRun(store, source, baseTree, path, entry)))
  const tree = await spliceTree(store, baseTree, kept)
  if (tree === null) throw new InternalError(`branch ${branch.name}: a changed path lies under no directory of its base tree`)
  return tree
}

/** `entry`, put at `path` by the branch, without what git would run: the base's entry for a held-back path, none inside a new directory. */
async function withoutGitToRun(store: Store, source: TreeSource, baseTree: Digest, path: string, entry: TreeEntry): Promise<TreeEntry | null> {
  if (isHeldBackGitPath(path, entry.type === 'dir')) return entryAt(source, baseTree, path.split('/'))
  if (entry.type !== 'dir') return entry
  return { ...entry, tree: (await holdBackGit({ store, source, tree: entry.tree, at: path, keep: async () => null })).tree }
}
