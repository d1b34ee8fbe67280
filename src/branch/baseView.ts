import { promises as fs } from 'node:fs'
import { digestHex, type Digest } from '../store/digest.js'
import type { Store } from '../store/Store.js'
import { withWriteLock } from '../store/storeLock.js'
import { errnoCode, exists } from '../util/fsx.js'
import { materializeTree } from '../world/materializeTree.js'
import { treeSource } from '../world/treeSource.js'
import { branchesDir } from './branchStore.js'

/**
 * The read-only base view of a tree: hard links to the store's immutable objects (copies
 * only for executables and chunked files, whose mode or bytes a link cannot carry).
 * Built once per base tree and shared by every branch made from it, so making a branch
 * costs nothing per file. Built aside and renamed into place: a view that exists is whole.
 */
export async function ensureBaseView(store: Store, tree: Digest): Promise<string> {
  const dir = branchesDir(store, 'bases', digestHex(tree))
  if (await exists(dir)) return dir
  return withWriteLock(store, async () => {
    const building = store.tempPath(`base-${digestHex(tree).slice(0, 12)}`)
    await fs.mkdir(branchesDir(store, 'bases'), { recursive: true })
    try {
      // Our own scan of this workspace made the tree, so its symlinks are the user's, as they were.
      await materializeTree({ store, source: treeSource(store), tree, into: building, method: 'hardlink', allowExternalSymlinks: true })
      await fs.rename(building, dir)
    } catch (err) {
      await fs.rm(building, { recursive: true, force: true })
      const raced = ['EEXIST', 'ENOTEMPTY'].includes(errnoCode(err) ?? '') && (await exists(dir))
      if (!raced) throw err
    }
    return dir
  })
}

/**
 * Remove base views no live branch uses, except the newest (most likely the workspace's
 * current one, which the next branch would otherwise have to build again).
 */
export async function pruneBaseViews(store: Store, inUse: Set<string>): Promise<string[]> {
  const root = branchesDir(store, 'bases')
  const views = await Promise.all(
    (await fs.readdir(root).catch(() => [] as string[])).map(async (name) => ({ dir: `${root}/${name}`, mtime: (await fs.stat(`${root}/${name}`)).mtimeMs })),
  )
  const newest = views.reduce<{ dir: string; mtime: number } | null>((a, b) => (a === null || b.mtime > a.mtime ? b : a), null)
  const removed: string[] = []
  for (const { dir } of views) {
    if (inUse.has(dir) || dir === newest?.dir) continue
    await fs.rm(dir, { recursive: true, force: true })
    removed.push(dir)
  }
  return removed
}
