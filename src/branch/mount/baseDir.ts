import { promises as fs } from 'node:fs'
import { basename, join } from 'node:path'
import { digestHex, isDigest, type Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { withWriteLock } from '../../store/storeLock.js'
import { errnoCode, exists } from '../../util/fsx.js'
import { materializeTree, writeFileEntry } from '../../world/checkout/materializeTree.js'
import { fsPath } from '../../util/fsName.js'
import { replacedEntries } from '../../world/diff/diffTrees.js'
import { outermost } from '../../world/tree/spliceTree.js'
import type { TreeEntry } from '../../objects/Tree.js'
import { treeSource } from '../../world/tree/treeSource.js'
import { baseDirPath, branchesDir, listStates } from '../lifecycle/branchStore.js'
import { creationLock } from '../lifecycle/creationLock.js'
import { removeTree } from '../lifecycle/removeTree.js'

/**
 * The read-only base directory of a tree: hard links to the store's immutable objects (copies
 * only for executables and chunked files, whose mode or bytes a link cannot carry).
 * Built once per base tree and shared by every branch made from it, so making a branch
 * costs nothing per file. Built aside and renamed into place: a base that exists is whole.
 */
export async function ensureBaseDir(store: Store, tree: Digest): Promise<string> {
  const dir = baseDirPath(store, tree)
  if (await exists(dir)) return dir
  // The branches of a pattern are made in parallel: one build of a base, not one each.
  let build = inFlight.get(dir)
  if (!build) {
    build = withWriteLock(store, () => advanceOrBuild(store, tree, dir)).finally(() => inFlight.delete(dir))
    inFlight.set(dir, build)
  }
  return build
}

const inFlight = new Map<string, Promise<string>>()

/**
 * A new base is made from the newest one no live branch uses when there is one (it would
 * be pruned anyway): changed where the trees differ, which for the next image of an agent
 * (a few files changed) costs a few links instead of one per file. Else it is built whole.
 */
async function advanceOrBuild(store: Store, tree: Digest, dir: string): Promise<string> {
  const taken = await takeUnused(store, (unused) => unused[0])
  const changes = taken === null ? null : await replacedEntries({ source: treeSource(store), a: taken.tree, b: tree }).catch(() => null) // its tree collected
  if (taken === null || changes === null) {
    if (taken) await removeTree(taken.path)
    return buildBaseView(store, tree, dir)
  }
  return changeInto(store, taken.path, dir, changes)
}

/** The base directories there are, the most recently made first. */
async function basesNewestFirst(store: Store): Promise<string[]> {
  const root = branchesDir(store, 'bases')
  const bases = await Promise.all(
    (await fs.readdir(root).catch(() => [] as string[])).map(async (name) => ({ dir: join(root, name), mtime: (await fs.stat(join(root, name)).catch(() => null))?.mtimeMs })),
  )
  return bases
    .filter((v): v is { dir: string; mtime: number } => v.mtime !== undefined)
    .sort((x, y) => y.mtime - x.mtime)
    .map((v) => v.dir)
}

/** Lay the base out aside and rename it into place; the caller holds the store's write lock. */
async function buildBaseView(store: Store, tree: Digest, dir: string): Promise<string> {
  const building = store.tempPath(`base-${digestHex(tree).slice(0, 12)}`)
  await fs.mkdir(branchesDir(store, 'bases'), { recursive: true })
  try {
    // Our own scan of this workspace made the tree, so its symlinks are the user's, as they were.
    await materializeTree({ store, source: treeSource(store), tree, into: building, method: 'hardlink', allowExternalSymlinks: true, verify: false })
    await fs.rename(building, dir)
  } catch (err) {
    await fs.rm(building, { recursive: true, force: true })
    const raced = ['EEXIST', 'ENOTEMPTY'].includes(errnoCode(err) ?? '') && (await exists(dir))
    if (!raced) throw err
  }
  return dir
}

/**
 * The base directory of tree `to`, which differs from tree `from` only at the paths of
 * `changes` (their new entries, null where removed). When no live branch stands on the
 * base of `from` (overlayfs forbids changing a lower layer under a mount), that base is
 * taken (moved aside under the creation lock, so no branch can start on it meanwhile),
 * changed at those paths only and renamed into place: the cost follows the change. Else
 * the base of `to` is built whole. The caller holds the store's write lock (taking it
 * again here could wait on a gc that waits on the caller).
 */
export async function advanceBaseDir(store: Store, from: Digest, to: Digest, changes: Map<string, TreeEntry | null>): Promise<string> {
  const dir = baseDirPath(store, to)
  if (await exists(dir)) return dir
  const base = baseDirPath(store, from)
  const taken = await takeUnused(store, (unused) => unused.find((v) => v === base))
  return taken === null ? buildBaseView(store, to, dir) : changeInto(store, taken.path, dir, changes)
}

/** Change a taken base at the paths of `changes` only, and rename it to `dir`. */
async function changeInto(store: Store, taken: string, dir: string, changes: Map<string, TreeEntry | null>): Promise<string> {
  try {
    for (const [path, entry] of outermost(changes)) {
      await removeTree(join(taken, path))
      if (entry) await writeEntry(store, join(taken, path), entry)
    }
    await fs.rename(taken, dir)
    const now = new Date()
    await fs.utimes(dir, now, now) // made now: pruning and advancing choose bases by it
  } catch (err) {
    await removeTree(taken)
    if (!['EEXIST', 'ENOTEMPTY'].includes(errnoCode(err) ?? '')) throw err
  }
  return dir
}

/**
 * Move the base `choose` picks among those no live branch uses (newest first) out of
 * `bases/`, into the store's tmp, and say which tree it was of; null when it picks none.
 * Decided under the creation lock, under which branches register the bases they name.
 */
async function takeUnused(store: Store, choose: (unusedNewestFirst: string[]) => string | undefined): Promise<{ path: string; tree: Digest } | null> {
  const lock = await creationLock(store)
  try {
    const inUse = await basesInUse(store)
    const base = choose((await basesNewestFirst(store)).filter((v) => !inUse.has(v)))
    const tree = base === undefined ? null : `sha256:${basename(base)}`
    if (base === undefined || !isDigest(tree)) return null
    const taken = store.tempPath('base-advancing')
    await fs.rename(base, taken)
    return { path: taken, tree }
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return null
    throw err
  } finally {
    await lock.release()
  }
}

/** The bases some live branch names. */
async function basesInUse(store: Store): Promise<Set<string>> {
  return new Set((await listStates(store)).flatMap((s) => s.layers))
}

async function writeEntry(store: Store, abs: string, entry: TreeEntry): Promise<void> {
  if (entry.type === 'dir') await materializeTree({ store, source: treeSource(store), tree: entry.tree, into: abs, method: 'hardlink', allowExternalSymlinks: true, verify: false })
  else if (entry.type === 'symlink') await fs.symlink(fsPath(entry.target), fsPath(abs))
  else await writeFileEntry(store, abs, entry, 'hardlink', abs, false)
}

/**
 * Remove base directories no live branch uses, except the newest (most likely the workspace's
 * current one, which the next branch would otherwise have to build again). Decided and
 * moved out of `bases/` under the creation lock, as a branch registers on a base under
 * it: a base is never removed under a branch about to mount it, nor half removed when
 * taken to be advanced. The removal itself runs after.
 */
export async function pruneBaseDirs(store: Store): Promise<void> {
  const root = branchesDir(store, 'bases')
  // Every open of a workspace calls this: with one base or none there is nothing to decide, and no lock to take.
  if ((await fs.readdir(root).catch(() => [])).length < 2) return
  const lock = await creationLock(store)
  const taken: string[] = []
  try {
    const inUse = await basesInUse(store)
    const older = (await basesNewestFirst(store)).slice(1)
    for (const dir of older) {
      if (inUse.has(dir)) continue
      const aside = store.tempPath('base-pruned')
      await fs.rename(dir, aside)
      taken.push(aside)
    }
  } finally {
    await lock.release()
  }
  for (const aside of taken) await fs.rm(aside, { recursive: true, force: true })
}
