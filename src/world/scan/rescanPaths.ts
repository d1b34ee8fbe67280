import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import type { ScanResult } from './scanWorkspace.js'
import { scanPaths } from './scanPaths.js'
import { ancestors, outermost, spliceTree } from '../tree/spliceTree.js'
import type { TreeEntry } from '../../objects/Tree.js'
import { entryAt } from '../tree/entryAt.js'
import { type TreeSource, joinPath, treeSource } from '../tree/treeSource.js'

/** What a workspace's tree holds in all, as a full scan reports it, kept up to date from change to change. */
export interface TreeTotals {
  files: number
  bytes: number
  /** Every symlink of the tree: each snapshot checks them all (`withWorldScan`), not only the changed ones. */
  symlinks: Symlink[]
}

interface Symlink {
  path: string
  target: string
}

export interface RescanArgs {
  store: Store
  workspace: string
  /** The workspace's tree as it was before the changes. */
  tree: Digest
  totals: TreeTotals
  /** The paths that changed since (relative, '/'-separated): created, modified, deleted, renamed from or to. */
  paths: string[]
  respectGitignore: boolean
}

/**
 * The workspace's tree from an older one and the paths changed since, as a full scan would
 * make it, reading only those paths: each is scanned again (a directory whole) and spliced
 * in. Null when the changes do not fit the older tree (a path under something that is not
 * a directory there): the caller scans in full.
 */
export async function rescanPaths({ store, workspace, tree, totals, paths, respectGitignore }: RescanArgs): Promise<ScanResult | null> {
  const scanned = await scanPaths({ store, dir: workspace, paths, respectGitignore })
  const spliced = await spliceTree(store, tree, scanned)
  if (spliced === null) return null
  const source = treeSource(store)
  const changed = outermost(scanned)
  const rescanned = new Set(changed.map(([path]) => path))
  const symlinks = totals.symlinks.filter(({ path }) => !rescanned.has(path) && !ancestors(path).some((a) => rescanned.has(a)))
  let { files, bytes } = totals
  let hashedFiles = 0
  let hashedBytes = 0
  for (const [path, entry] of changed) {
    const old = await entryAt(source, tree, path.split('/'))
    const gone = old ? await entryTotals(source, old, path, null) : { files: 0, bytes: 0 }
    const come = entry ? await entryTotals(source, entry, path, symlinks) : { files: 0, bytes: 0 }
    files += come.files - gone.files
    bytes += come.bytes - gone.bytes
    hashedFiles += come.files
    hashedBytes += come.bytes
  }
  return { tree: spliced, trees: new Map(), symlinks, persist: () => store.sync(), files, bytes, hashedFiles, hashedBytes, listedDirs: 0, skipped: [] }
}

/** The files and bytes an entry holds (a directory's whole subtree), and the symlinks in it when asked. */
async function entryTotals(source: TreeSource, entry: TreeEntry, path: string, symlinks: Symlink[] | null): Promise<{ files: number; bytes: number }> {
  if (entry.type === 'file') return { files: 1, bytes: entry.size }
  if (entry.type === 'symlink') {
    symlinks?.push({ path, target: entry.target })
    return { files: 0, bytes: 0 }
  }
  const totals = { files: 0, bytes: 0 }
  for (const child of (await source(entry.tree)).entries) {
    const sub = await entryTotals(source, child, joinPath(path, child.name), symlinks)
    totals.files += sub.files
    totals.bytes += sub.bytes
  }
  return totals
}
