import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { spliceTree } from '../tree/spliceTree.js'
import type { TreeEntry } from '../../objects/Tree.js'
import { type TreeSource, joinPath } from '../tree/treeSource.js'

export interface HeldBack {
  /** The tree to write: the one asked for, with what is held back left as `keep` says. */
  tree: Digest
  /** The files held back, as paths of the tree. */
  heldBack: string[]
}

/**
 * Hold back what git would run from a tree of another store's image: every `.git/config`
 * and `.git/hooks/` (a `core.fsmonitor` or a hook runs on the next `git status` or commit),
 * and a `.git` that is a file or symlink (it points git at another directory), at any
 * depth. Git itself refuses `.git` in trees for this reason. Each held-back path gets
 * what `keep` gives for it (the workspace's own entry, for a checkout in place) or
 * nothing. Every tree is read once.
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
  await findGit(source, tree, '', found)
  if (found.length === 0) return { tree, heldBack: [] }
  const changes = new Map<string, TreeEntry | null>()
  for (const { path } of found) changes.set(path, await keep(path))
  return { tree: (await spliceTree(store, tree, changes)) ?? tree, heldBack: found.flatMap((f) => f.files) }
}

async function findGit(source: TreeSource, tree: Digest, prefix: string, found: Array<{ path: string; files: string[] }>): Promise<void> {
  for (const entry of (await source(tree)).entries) {
    const path = joinPath(prefix, entry.name)
    if (entry.name !== '.git') {
      if (entry.type === 'dir') await findGit(source, entry.tree, path, found)
      continue
    }
    if (entry.type !== 'dir') {
      found.push({ path, files: [path] })
      continue
    }
    for (const inner of (await source(entry.tree)).entries) {
      const innerPath = joinPath(path, inner.name)
      if (inner.name === 'config') found.push({ path: innerPath, files: [innerPath] })
      if (inner.name === 'hooks') found.push({ path: innerPath, files: inner.type === 'dir' ? await filesUnder(source, inner.tree, innerPath) : [innerPath] })
    }
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
