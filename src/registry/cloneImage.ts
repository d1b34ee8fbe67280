import { promises as fs } from 'node:fs'
import { join, resolve } from 'node:path'
import { TargetNotEmptyError } from '../errors/index.js'
import { STORE_DIR_NAME } from '../store/findStore.js'
import { headRef, readRef, updateRef } from '../store/refs.js'
import { Store } from '../store/Store.js'
import { checkout } from '../world/checkout.js'
import { type PullArgs, type PullResult, pullImage } from './pullImage.js'

export interface CloneArgs extends Omit<PullArgs, 'dir' | 'store'> {
  /** The directory to materialize the image in: new or empty. */
  into: string
  /** The store to pull into (created if needed); default `INTO/.forkpoint`, making INTO a workspace. */
  store?: string
  /** The head (`refs/heads/NAME`) to point at the image when the store has none by that name. */
  head?: string
}

export interface CloneResult extends PullResult {
  into: string
  storeDir: string
  /** The head made to point at the image, or null when the store had one by that name. */
  head: string | null
  files: number
}

/**
 * Pull an image into a store (a new one inside `into` by default) and materialize it in
 * `into`. The image is checked completely before anything is written to `into`.
 */
export async function cloneImage({ into, store, head = 'main', ...pull }: CloneArgs): Promise<CloneResult> {
  const target = resolve(into)
  const entries = await fs.readdir(target).catch(() => null)
  if (entries && entries.length > 0) throw new TargetNotEmptyError(`clone target ${target} exists and is not empty`, { target })
  const storeDir = store ? resolve(store) : join(target, STORE_DIR_NAME)
  const created = await Store.init(storeDir)
  try {
    const pulled = await pullImage({ ...pull, store: created })
    const headName = (await readRef(created, headRef(head))) === null ? head : null
    if (headName) await updateRef({ store: created, name: headRef(headName), id: pulled.id, expected: null, message: `clone ${pulled.remote}` })
    const result = store
      ? await checkout({ store: created, id: pulled.id, into: target, allowExternalSymlinks: pull.allowExternalSymlinks ?? false })
      : await checkout({ store: created, dir: target, id: headName ?? pulled.id, force: true, allowExternalSymlinks: pull.allowExternalSymlinks ?? false })
    return { ...pulled, into: target, storeDir, head: headName, files: result.files }
  } catch (err) {
    if (!store) await fs.rm(entries === null ? target : storeDir, { recursive: true, force: true }) // leave `into` as it was
    throw err
  }
}
