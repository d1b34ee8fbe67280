import { PathLimitError, UnsafePathError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import { STORE_DIR_NAME } from '../../store/findStore.js'
import { bytesOfName } from '../../util/fsName.js'
import { NAME_MAX, PATH_MAX } from '../../util/longPath.js'
import { quotePath } from '../diff/quotePath.js'
import type { StoreDirectory } from '../scan/storeDirectory.js'
import type { TreeEntry } from '../../objects/Tree.js'
import { type CostSources, MAX_TREE_DEPTH, admitCheckoutCost } from './checkoutCost.js'
import { type Limits, resolveLimits } from '../../util/limits.js'
import { type LinkLookup, MAX_LINK_HOPS, resolveLink, treeLookup } from './treeLinks.js'
import { joinPath, sameEntry } from '../tree/treeSource.js'

export interface AdmitTreeArgs {
  source: CostSources['tree']
  /** Where the tree's chunk lists are read, for what its checkout costs. */
  chunks: CostSources['chunks']
  /** The budget a checkout must keep to (default: environment, then DEFAULT_LIMITS). */
  limits?: Limits | undefined
  tree: Digest
  /** The directory the tree is written into (its paths' prefix on disk). */
  root: string
  /** The store in use, when it may lie inside `root` (an in-place checkout, a clone). */
  store?: StoreDirectory
  /** Let symlinks that lead out of the tree through. */
  allowExternalSymlinks: boolean
  /**
   * The tree a scan of `root` found there now (an in-place checkout or merge): a subtree it
   * holds at the same path (an entry, or a whole directory) is on disk already and nothing
   * will be written there, so it is not checked again (a merge of 10 files into a 10k-file
   * workspace checks the 10 files).
   */
  onDisk?: { tree: Digest; /** regular files in `tree` */ files: number }
}

/**
 * Check a whole tree before the first thing is written from it, so that a tree the
 * file system cannot hold, or that would reach outside its root, changes nothing:
 * - what it checks out within the budget (`admitCheckoutCost`: bytes, paths, expansion,
 *   depth), found first, so that the walk below, which visits every path, is bounded too
 *   (InvalidImageError, PathLimitError, exit 5);
 * - every name at most NAME_MAX bytes, every path under `root` shorter than PATH_MAX, no
 *   more than MAX_TREE_DEPTH directories deep (PathLimitError, exit 5);
 * - no entry where a store lives: none named `.forkpoint` at any depth (a scan never
 *   records one), or the store in use whatever its name (UnsafePathError, exit 5);
 *   a workspace's `.git` is content like any other directory;
 * - no symlink leading out of the tree, resolved through the tree's own links
 *   (`resolveLink`), unless allowed (UnsafePathError, exit 5).
 * Each names the first path at fault. Returns how many regular files the tree holds.
 */
export async function admitTree(args: AdmitTreeArgs): Promise<{ files: number }> {
  await admitCheckoutCost({ tree: args.source, chunks: args.chunks }, args.tree, args.limits ?? resolveLimits(), `tree ${args.tree}`)
  const links = treeLookup(args.source, args.tree)
  const rootBytes = bytesOfName(args.root).length
  const countFiles = fileCounter(args.source)
  const filesIn = (entry: TreeEntry | undefined): Promise<number> | number => (entry?.type === 'file' ? 1 : entry?.type === 'dir' ? countFiles(entry.tree) : 0)
  // checks `digest`'s entries that differ from `onDisk`'s; returns how many more files it holds
  const walk = async (digest: Digest, onDisk: Digest | undefined, prefix: string[], bytes: number): Promise<number> => {
    if (digest === onDisk) return 0
    const there = new Map(onDisk === undefined ? [] : (await args.source(onDisk)).entries.map((e) => [e.name, e]))
    let more = 0
    for (const entry of (await args.source(digest)).entries) {
      const old = there.get(entry.name)
      there.delete(entry.name)
      if (sameEntry(old, entry)) continue
      const parts = [...prefix, entry.name]
      const path = parts.join('/')
      const pathBytes = bytes + 1 + fitName(entry, path, bytes, parts.length)
      assertNotAStore(args, entry, path)
      if (entry.type === 'symlink' && !args.allowExternalSymlinks) await assertLinkInside(links, parts, entry.target)
      if (entry.type === 'dir' && old?.type === 'dir') more += await walk(entry.tree, old.tree, parts, pathBytes)
      else more += (entry.type === 'dir' ? await walk(entry.tree, undefined, parts, pathBytes) : (filesIn(entry) as number)) - (await filesIn(old))
    }
    for (const gone of there.values()) more -= await filesIn(gone)
    return more
  }
  return { files: (args.onDisk?.files ?? 0) + (await walk(args.tree, args.onDisk?.tree, [], rootBytes)) }
}

/** How many regular files a tree holds, each subtree counted once. */
function fileCounter(source: CostSources['tree']): (digest: Digest) => Promise<number> {
  const counted = new Map<Digest, number>()
  const count = async (digest: Digest): Promise<number> => {
    let n = counted.get(digest)
    if (n !== undefined) return n
    n = 0
    for (const entry of (await source(digest)).entries) {
      if (entry.type === 'file') n++
      else if (entry.type === 'dir') n += await count(entry.tree)
    }
    counted.set(digest, n)
    return n
  }
  return count
}

/** The entry's name length in bytes, after checking it, its path and its depth against the limits. */
function fitName(entry: TreeEntry, path: string, prefixBytes: number, depth: number): number {
  const nameBytes = bytesOfName(entry.name).length
  if (nameBytes > NAME_MAX) throw limit(path, `its name is ${nameBytes} bytes (the file system allows ${NAME_MAX})`)
  if (prefixBytes + 1 + nameBytes >= PATH_MAX) throw limit(path, `its path would be ${prefixBytes + 1 + nameBytes} bytes long (the file system allows ${PATH_MAX - 1})`)
  if (entry.type === 'dir' && depth > MAX_TREE_DEPTH) throw limit(path, `the tree is more than ${MAX_TREE_DEPTH} directories deep`)
  return nameBytes
}

function assertNotAStore(args: AdmitTreeArgs, entry: TreeEntry, path: string): void {
  const isStore = entry.name === STORE_DIR_NAME || args.store?.is(joinPath(args.root, path))
  if (isStore) throw new UnsafePathError(`refusing the tree: its entry ${quotePath(path)} would write into a forkpoint store`, { path })
}

/** Refuse (UnsafePathError, exit 5) a symlink that `resolveLink` finds leading out of `links`' root. */
export async function assertLinkInside(links: LinkLookup, parts: string[], target: string): Promise<void> {
  const where = await resolveLink(links, parts, target)
  if (where === 'inside') return
  const path = parts.join('/')
  const why = where === 'outside' ? 'points outside the tree' : `does not resolve within ${MAX_LINK_HOPS} links`
  throw new UnsafePathError(`symlink ${quotePath(path)} -> ${quotePath(target)} ${why} (allow with --allow-external-symlinks)`, { path, target })
}

function limit(path: string, why: string): PathLimitError {
  const shown = path.length > 200 ? `${path.slice(0, 200)}...` : path
  return new PathLimitError(`refusing the tree: ${quotePath(shown)} cannot be written: ${why}`, { path })
}
