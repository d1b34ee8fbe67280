import type { Digest } from '../../objects/digest.js'
import { InternalError } from '../../errors/index.js'
import type { Store } from '../../store/Store.js'
import { spliceTree } from '../tree/spliceTree.js'
import type { TreeEntry } from '../../objects/Tree.js'
import { type TreeSource, joinPath } from '../tree/treeSource.js'
import { isHeldBackGitPath } from './heldBackGitPath.js'

export interface HeldBack {
  /** The tree to write: the one asked for, with what is held back left as `keep` says. */
  tree: Digest
  /** The files held back, as paths of the tree. */
  heldBack: string[]
}

/**
 * Hold back what git would run from a tree (`isHeldBackGitPath`: every `.git/config` and
 * `.git/hooks/`, a submodule's too, and a `.git` that is a file or symlink, at any depth).
 * Each held-back path gets what `keep` gives for it (the workspace's own entry, for a
 * checkout in place) or nothing. Every tree is read once.
 */
export async function holdBackGit({
  store,
  source,
  tree,
  keep,
}: {
  store: Store
  source: TreeSource
  tree: Digest
  keep: (path: string) => Promise<TreeEntry | null>
}): Promise<HeldBack> {
  const found: Array<{ path: string; files: string[] }> = []
  await findHeld(source, tree, '', found)
  if (found.length === 0) return { tree, heldBack: [] }
  const changes = new Map<string, TreeEntry | null>()
  for (const { path } of found) changes.set(path, await keep(path))
  const kept = await spliceTree(store, tree, changes, source)
  if (kept === null) throw new InternalError('holding back git files: a path lies under no directory of the tree')
  return { tree: kept, heldBack: found.flatMap((f) => f.files) }
}

async function findHeld(source: TreeSource, tree: Digest, prefix: string, found: Array<{ path: string; files: string[] }>): Promise<void> {
  for (const entry of (await source(tree)).entries) {
    const path = joinPath(prefix, entry.name)
    if (isHeldBackGitPath(path, entry.type === 'dir')) found.push({ path, files: entry.type === 'dir' ? await filesUnder(source, entry.tree, path) : [path] })
    else if (entry.type === 'dir') await findHeld(source, entry.tree, path, found)
  }
}

async function filesUnder(source: TreeSource, tree: Digest, prefix: string): Promise<string[]> {
  const files: string[] = []
  for (const entry of (await source(tree)).entries) {
    const path = joinPath(prefix, entry.name)
    files.push(...(entry.type === 'dir' ? await filesUnder(source, entry.tree, path) : [path]))
  }
  return files
}
