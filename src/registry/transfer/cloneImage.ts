import { promises as fs } from 'node:fs'
import { join, resolve } from 'node:path'
import { TargetNotEmptyError } from '../../errors/index.js'
import { STORE_DIR_NAME } from '../../store/findStore.js'
import type { Digest } from '../../objects/digest.js'
import { type Head, headRef, readRef, setHead, updateRef } from '../../store/refs.js'
import { Store } from '../../store/Store.js'
import { ArrivingCheckout } from '../../world/checkout/ArrivingCheckout.js'
import { checkout, hiddenSibling } from '../../world/checkout/checkout.js'
import { fsPath } from '../../util/fsName.js'
import { holdBackGit } from '../../world/checkout/holdBackGit.js'
import { readSnapshot } from '../../world/tree/readObjects.js'
import { treeSource } from '../../world/tree/treeSource.js'
import { type PullArgs, type PullResult, pullImage } from './pullImage.js'
import { CHECK_THREADS, FrameCheckers } from '../pack/FrameCheckers.js'
import { type Limits, resolveLimits } from '../pack/limits.js'

export interface CloneArgs extends Omit<PullArgs, 'dir' | 'store'> {
  /** The directory to materialize the image in: new or empty. */
  into: string
  /** The store to pull into (created if needed); default `INTO/.forkpoint`, making INTO a workspace. */
  store?: string
  /** The head (`refs/heads/NAME`) to point at the image when the store has none by that name. */
  head?: string
  /** Write the image's `.git/config`, `.git/hooks/` and `.git` files too (held back otherwise: `holdBackGit`). */
  trustGit?: boolean
}

export interface CloneResult extends PullResult {
  into: string
  storeDir: string
  /** The head made to point at the image, or null when the store had one by that name. */
  head: string | null
  files: number
  /** Files held back (git would run them); `forkpoint checkout --trust-git` writes them. */
  heldBack: string[]
}

/**
 * Pull an image into a store (a new one inside `into` by default) and materialize it in
 * `into`. Files are written as the pull brings their objects (`ArrivingCheckout`), by the
 * threads that check the pack, into a directory hidden in the store (or beside `into`),
 * which becomes `into`'s content only once the whole image has been checked and is in
 * the store and every write is done.
 */
export async function cloneImage({ into, store, head = 'main', trustGit = false, ...pull }: CloneArgs): Promise<CloneResult> {
  const target = resolve(into)
  const entries = await fs.readdir(target).catch(() => null)
  if (entries && entries.length > 0) throw new TargetNotEmptyError(`clone target ${target} exists and is not empty`, { target })
  const storeDir = store ? resolve(store) : join(target, STORE_DIR_NAME)
  const created = await Store.init(storeDir)
  const allowExternalSymlinks = pull.allowExternalSymlinks ?? false
  const hidden = store ? hiddenSibling(target) : created.tempPath('clone')
  const limits = resolveLimits(pull.limits)
  const early = new ArrivingCheckout({ into: hidden, allowExternalSymlinks, limits })
  let threads: FrameCheckers | null = null
  try {
    threads = new FrameCheckers(CHECK_THREADS) // started now, while the manifests come
    const pulled = await pullImage({ ...pull, limits, store: created }, { image: early.image, structured: early.structured, places: early.places, threads })
    await threads.settle() // the files written as the pack came (the image was checked meanwhile)
    await threads.close()
    const headName = (await readRef(created, headRef(head))) === null ? head : null
    if (headName) await updateRef({ store: created, name: headRef(headName), id: pulled.id, expected: null, message: `clone ${pulled.remote}` })
    const { files, heldBack } = early.planned
      ? await revealArrived(
          early,
          created,
          hidden,
          target,
          store ? null : headName ? { type: 'symbolic', ref: headRef(headName) } : { type: 'detached', id: pulled.id },
          trustGit ? null : pulled.id,
        )
      : await checkoutPulled(created, target, store ? { into: pulled.id } : { inPlace: headName ?? pulled.id }, { allowExternalSymlinks, trustGit, limits })
    return { ...pulled, into: target, storeDir, head: headName, files, heldBack }
  } catch (err) {
    await threads?.close() // no write after this
    await fs.rm(hidden, { recursive: true, force: true })
    if (!store) await fs.rm(entries === null ? target : storeDir, { recursive: true, force: true }) // leave `into` as it was
    throw err
  }
}

/**
 * Finish the checkout written as the objects arrived and make it the target's content:
 * its entries moved in beside the store, then HEAD set (`head`: a store inside the
 * target), or the whole directory renamed to the target (a store elsewhere). The git
 * files of image `holdBackOf` are removed before anything is revealed.
 */
async function revealArrived(
  early: ArrivingCheckout,
  store: Store,
  hidden: string,
  target: string,
  head: Head | null,
  holdBackOf: Digest | null,
): Promise<{ files: number; heldBack: string[] }> {
  const files = await early.finish(store)
  const heldBack = holdBackOf === null ? [] : await removeGitFiles(store, holdBackOf, hidden)
  if (head === null) {
    await fs.rename(hidden, target)
    return { files, heldBack }
  }
  const under = (dir: string, name: Buffer) => Buffer.concat([Buffer.from(`${dir}/`), name]) // names as bytes: not all are UTF-8
  for (const name of await fs.readdir(hidden, { encoding: 'buffer' })) await fs.rename(under(hidden, name), under(target, name))
  await fs.rmdir(hidden)
  await setHead(store, head)
  return { files, heldBack }
}

/** Remove from a checkout of image `id` in `dir` what `holdBackGit` holds back; returns those paths. */
async function removeGitFiles(store: Store, id: Digest, dir: string): Promise<string[]> {
  const { heldBack } = await holdBackGit({ store, source: treeSource(store), tree: (await readSnapshot(store, id)).world.tree, keep: async () => null })
  for (const path of heldBack) await fs.rm(fsPath(join(dir, path)), { recursive: true, force: true })
  return heldBack
}

/** Check the pulled image out as any checkout does (its objects did not arrive trees first): in place (by head name or id), or into a new target. */
async function checkoutPulled(
  store: Store,
  target: string,
  what: { inPlace: string } | { into: Digest },
  options: { allowExternalSymlinks: boolean; trustGit: boolean; limits: Limits },
): Promise<{ files: number; heldBack: string[] }> {
  const result =
    'into' in what ? await checkout({ store, id: what.into, into: target, ...options }) : await checkout({ store, dir: target, id: what.inPlace, force: true, ...options })
  return { files: result.files, heldBack: result.heldBack }
}
