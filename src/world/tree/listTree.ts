import { UsageError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import { resolveId } from '../../store/resolveId.js'
import { entryAt } from './entryAt.js'
import { readSnapshot } from './readObjects.js'
import type { TreeEntry } from '../../objects/Tree.js'
import { treeSource } from './treeSource.js'

export interface TreeListing {
  id: Digest
  /** The directory listed, `''` for the root. */
  path: string
  /** How many entries the directory has; `entries` holds at most `limit` of them. */
  total: number
  entries: Array<{ name: string; type: TreeEntry['type']; mode: number; size: number; target?: string }>
}

/**
 * One directory of an image's file tree (`path`, slash-separated, default the root).
 * @throws {UsageError} `path` is not a directory of the image
 */
export async function listTree({ id: spec, path = '', limit = 2000, ...locator }: StoreLocator & { id: string; path?: string; limit?: number }): Promise<TreeListing> {
  const { store } = await openStore(locator)
  const id = await resolveId(store, spec)
  const source = treeSource(store)
  const root = (await readSnapshot(store, id)).world.tree
  const parts = path.split('/').filter(Boolean)
  const entry = parts.length === 0 ? null : await entryAt(source, root, parts)
  if (parts.length > 0 && entry?.type !== 'dir') throw new UsageError(`${path} is not a directory of image ${id}`, { path })
  const tree = await source(entry?.type === 'dir' ? entry.tree : root)
  const entries = tree.entries.slice(0, limit).map((e) => ({ name: e.name, type: e.type, mode: e.mode, size: e.size, ...(e.type === 'symlink' ? { target: e.target } : {}) }))
  return { id, path, total: tree.entries.length, entries }
}
