import { promises as fs } from 'node:fs'
import { join, resolve } from 'node:path'
import { TargetNotEmptyError } from '../errors/index.js'
import { STORE_DIR_NAME } from '../store/findStore.js'
import { branchRef, readRef, updateRef } from '../store/refs.js'
import { Store } from '../store/Store.js'
import { checkout } from '../world/checkout.js'
import { type PullArgs, type PullResult, pullImage } from './pullImage.js'

export interface CloneArgs extends Omit<PullArgs, 'dir' | 'store'> {
  /** The directory to materialize the image in: new or empty. */
  into: string
  /** The store to pull into (created if needed); default `INTO/.forkpoint`, making INTO a workspace. */
  store?: string
  /** The branch to point at the image when the store has none by that name. */
  branch?: string
}

export interface CloneResult extends PullResult {
  into: string
  storeDir: string
  branch: string | null
  files: number
}

/**
 * Pull an image into a store (a new one inside `into` by default) and materialize it in
 * `into`. The image is checked completely before anything is written to `into`.
 */
export async function cloneImage({ into, store, branch = 'main', ...pull }: CloneArgs): Promise<CloneResult> {
  const target = resolve(into)
  const entries = await fs.readdir(target).catch(() => null)
  if (entries && entries.length > 0) throw new TargetNotEmptyError(`clone target ${target} exists and is not empty`, { target })
  const storeDir = store ? resolve(store) : join(target, STORE_DIR_NAME)
  const created = await Store.init(storeDir)
  try {
    const pulled = await pullImage({ ...pull, store: created })
    const branchName = (await readRef(created, branchRef(branch))) === null ? branch : null
    if (branchName) await updateRef({ store: created, name: branchRef(branchName), id: pulled.id, expected: null, message: `clone ${pulled.remote}` })
    const result = store
      ? await checkout({ store: created, id: pulled.id, into: target, allowExternalSymlinks: pull.allowExternalSymlinks ?? false })
      : await checkout({ store: created, dir: target, id: branchName ?? pulled.id, force: true, allowExternalSymlinks: pull.allowExternalSymlinks ?? false })
    return { ...pulled, into: target, storeDir, branch: branchName, files: result.files }
  } catch (err) {
    if (!store) await fs.rm(entries === null ? target : storeDir, { recursive: true, force: true }) // leave `into` as it was
    throw err
  }
}
