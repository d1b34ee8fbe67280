import { relative, resolve, sep } from 'node:path'
import { UsageError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import { readHead } from '../../store/refs.js'
import { resolveId } from '../../store/resolveId.js'
import { withWriteLock } from '../../store/storeLock.js'
import { type Limits, resolveLimits } from '../../util/limits.js'
import { cameFromElsewhere } from './cameFromElsewhere.js'
import { type CheckoutResult, applyTree, scanForCheckout } from './checkout.js'
import { recoverCheckout } from './checkoutJournal.js'
import { entryAt } from '../tree/entryAt.js'
import type { CopyMethod } from './materializeTree.js'
import { quotePath } from '../diff/quotePath.js'
import { readSnapshot } from '../tree/readObjects.js'
import { type Tree, type TreeEntry, dirEntry, treeObject } from '../../objects/Tree.js'
import { type TreeSource, treeSource, zipEntries } from '../tree/treeSource.js'
import { withWorkspaceLock } from '../workspace/workspaceLock.js'

export interface RestorePathsArgs extends StoreLocator {
  /** The image to take the paths from: a snapshot id, short id, head, tag or `HEAD~N`. */
  id: string
  /** Files or directories, relative to `dir` (default: the current directory), inside the workspace. */
  paths: string[]
  allowExternalSymlinks?: boolean
  /** Take `.git/config`, `.git/hooks/` and `.git` files of an image from another store as they are (`holdBackGit`). */
  trustGit?: boolean
  method?: CopyMethod | 'auto'
  limits?: Partial<Limits>
}

/** A checkout's result for the paths restored: `changed` counts paths written, `files` the workspace's once restored. */
export interface RestorePathsResult extends Omit<CheckoutResult, 'mode' | 'tree'> {
  mode: 'paths'
  /** The paths restored, relative to the workspace. */
  paths: string[]
}

/**
 * `checkout ID -- PATH…` as git's `checkout <tree-ish> -- <paths>`: each path's file or
 * directory from the image written over the workspace's, uncommitted changes there
 * included; files of the workspace the image lacks inside a restored directory stay
 * (git's overlay mode); HEAD does not move. Atomic, as a checkout (`applyTree`).
 * @throws {UsageError} a path the image lacks, or one outside the workspace (nothing is written)
 */
export async function restorePaths(args: RestorePathsArgs): Promise<RestorePathsResult> {
  const { store, workspace } = await openStore(args)
  const id = await resolveId(store, args.id)
  const image = (await readSnapshot(store, id)).world.tree
  const paths = args.paths.map((p) => workspacePath(workspace, resolve(args.dir ?? process.cwd(), p), p))
  const wanted = await Promise.all(paths.map(async (path) => ({ path, entry: await imageEntry(treeSource(store), image, path, id) })))
  const holdBack = !args.trustGit && (await cameFromElsewhere(store, id))
  await recoverCheckout(store, workspace)
  return withWriteLock(store, () =>
    withWorkspaceLock(store, async () => {
      const scan = await scanForCheckout(store, workspace)
      const trees = new Map(scan.trees)
      const source = treeSource(store, trees)
      let tree = scan.tree
      for (const { path, entry } of wanted) tree = await placeAt(source, trees, tree, path.split('/'), entry)
      const head = await readHead(store)
      const applied = await applyTree({
        store,
        workspace,
        tree,
        head: head.type === 'symbolic' ? `ref: ${head.ref}\n` : `${head.id}\n`,
        force: true, // git overwrites the paths it is given, changed or not
        cleanScan: { ...scan, trees },
        holdBackGit: holdBack,
        allowExternalSymlinks: args.allowExternalSymlinks,
        method: args.method,
        limits: resolveLimits(args.limits),
      })
      return { id, target: workspace, mode: 'paths', paths, ...applied }
    }),
  )
}

/**
 * `checkout` with paths: `restorePaths`, refusing what only a whole checkout does.
 * @throws {UsageError} `into` or `force` given with paths
 */
export async function checkoutPaths({
  into,
  force,
  onProgress: _onProgress,
  ...args
}: RestorePathsArgs & { into?: string | undefined; force?: boolean | undefined; onProgress?: unknown }): Promise<RestorePathsResult> {
  if (into) throw new UsageError('--into checks out a whole snapshot: give it without paths')
  if (force) throw new UsageError('paths are restored over uncommitted changes already: --force is for a whole checkout')
  return restorePaths(args)
}

function workspacePath(workspace: string, abs: string, given: string): string {
  const rel = relative(workspace, abs)
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`)) throw new UsageError(`${quotePath(given)} is not a path inside the workspace ${workspace}`, { path: given })
  return rel.split(sep).join('/')
}

async function imageEntry(source: TreeSource, image: Digest, path: string, id: Digest): Promise<TreeEntry> {
  const entry = await entryAt(source, image, path.split('/'))
  if (!entry) throw new UsageError(`pathspec ${quotePath(path)} did not match any file in image ${id}`, { path })
  return entry
}

/** `tree` with `entry` laid over what is at `parts` (directories on the way made where missing); new trees go to `trees`. */
async function placeAt(source: TreeSource, trees: Map<Digest, Tree>, tree: Digest, parts: string[], entry: TreeEntry): Promise<Digest> {
  const entries = new Map((await source(tree)).entries.map((e) => [e.name, e]))
  const [name, ...rest] = parts as [string, ...string[]]
  const current = entries.get(name)
  if (rest.length === 0) entries.set(name, await overlaid(source, trees, current, { ...entry, name }))
  else entries.set(name, dirEntry(name, await placeAt(source, trees, current?.type === 'dir' ? current.tree : remember(trees, []), rest, entry)))
  return remember(trees, [...entries.values()])
}

/** The image's entry over the workspace's: two directories merge name by name, the image's winning; anything else is the image's. */
async function overlaid(source: TreeSource, trees: Map<Digest, Tree>, current: TreeEntry | undefined, entry: TreeEntry): Promise<TreeEntry> {
  if (entry.type !== 'dir' || current?.type !== 'dir') return entry
  const merged: TreeEntry[] = []
  for (const {
    entries: [mine, theirs],
  } of zipEntries(await source(current.tree), await source(entry.tree))) {
    merged.push(theirs ? await overlaid(source, trees, mine, theirs) : mine!)
  }
  return dirEntry(entry.name, remember(trees, merged))
}

function remember(trees: Map<Digest, Tree>, entries: TreeEntry[]): Digest {
  const { tree, digest } = treeObject(entries)
  trees.set(digest, tree)
  return digest
}
