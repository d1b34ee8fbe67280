import { promises as fs } from 'node:fs'
import { StoreCorruptError } from '../errors/index.js'
import { readStateTextOrNull } from './readStateFile.js'
import type { Digest } from '../objects/digest.js'
import { gcRoots } from './gcRoots.js'
import { DEFAULT_PRUNE, parseExpiry } from './parseExpiry.js'
import { expireReflogs, isLive, listReflogs, readReflog } from './reflog.js'
import { listShards, walkGraph } from './objectGraph.js'
import type { Store } from './Store.js'
import { withGcLock } from './storeLock.js'
import { openStore, type StoreLocator } from './findStore.js'

export interface GcArgs extends StoreLocator {
  dryRun?: boolean
  /** Reflog entries older than this expire first (`now`, `never`, `90.days`, `2.weeks.ago`, a date); default DEFAULT_PRUNE. */
  prune?: string
  /** The clock, for ages. */
  now?: Date
}

export interface GcResult {
  kept: number
  /** Reflog entries that expired (or would, in a dry run). */
  expiredReflogEntries: number
  removed: Digest[]
  freedBytes: number
}

/** Temp files (in `tmp/`, or dot-files beside objects) older than this are leftovers of a crashed writer. */
const STALE_TEMP_MS = 60 * 60 * 1000

/**
 * Where an in-place checkout writes its journal (world/checkout/checkoutJournal.ts). The staging
 * directory it names (a name under `tmp/`) is kept however old: the next command needs it to
 * finish the checkout.
 */
export const CHECKOUT_JOURNAL = 'checkout-journal.json'

/**
 * Expire reflog entries older than `prune`, then drop every object that no ref, HEAD or
 * remaining reflog entry reaches: what a deleted tag, a moved branch or a removed run
 * held comes back once its log entries are older than `prune`. Runs with all writers
 * excluded (see storeLock), so an object a concurrent snapshot just wrote but has not yet
 * referenced is never taken. Caches that name objects (the stat cache) are dropped when
 * anything was removed, so they can never vouch for an object that is gone.
 */
export async function gc({ dryRun = false, prune = DEFAULT_PRUNE, now = new Date(), ...locator }: GcArgs = {}): Promise<GcResult> {
  const { store } = await openStore(locator)
  const cutoff = parseExpiry(prune, now)
  return withGcLock(store, async () => {
    const { reachable, missing, corrupt } = await walkGraph(store, await gcRoots(store, cutoff))
    // A reachable object that is missing or unreadable hides what it names: sweeping now
    // could delete objects that a repaired store would need.
    if (missing.size > 0 || corrupt.size > 0) {
      throw new StoreCorruptError(`gc refuses to run: ${corrupt.size} corrupt and ${missing.size} missing reachable objects (run 'forkpoint verify')`, {
        corrupt: [...corrupt],
        missing: [...missing.keys()],
      })
    }
    // the logs lose their old entries before any object goes, so no log ever names a removed object
    const expiredReflogEntries = dryRun ? await countExpired(store, cutoff) : await expireReflogs(store, cutoff)
    const removed: Digest[] = []
    let freedBytes = 0
    const { objects, temps } = await listShards(store)
    for (const digest of objects) {
      if (reachable.has(digest)) continue
      const path = store.objectPath(digest)
      const st = await fs.stat(path).catch(() => null)
      if (!st) continue
      freedBytes += st.size
      removed.push(digest)
      if (!dryRun) await fs.rm(path, { force: true })
    }
    const packed = await sweepPacks(store, reachable, new Set(removed), dryRun)
    removed.push(...packed.removed)
    freedBytes += packed.freedBytes
    if (!dryRun) {
      await removeStaleTemps(store)
      await removeUncommittedPacks(store)
      for (const temp of temps) await removeIfStale(temp) // an object is written as a dot-file in its shard, then renamed
      if (removed.length > 0) await fs.rm(store.path('index'), { force: true })
    }
    return { kept: reachable.size, expiredReflogEntries, removed, freedBytes }
  })
}

/**
 * A kept pack holding objects nothing reaches is dropped, its reachable objects first
 * written out as files of their own (and made durable): packs are never rewritten in
 * place, and the packs a pull keeps are whole images, seldom partly dead.
 */
async function sweepPacks(
  store: Store,
  reachable: ReadonlyMap<Digest, number>,
  removedFiles: ReadonlySet<Digest>,
  dryRun: boolean,
): Promise<{ removed: Digest[]; freedBytes: number }> {
  const removed: Digest[] = []
  let freedBytes = 0
  for (const pack of store.packs.list()) {
    const dead = pack.index.objects.filter((o) => !reachable.has(o.digest))
    if (dead.length === 0) continue
    for (const o of dead) {
      if (removedFiles.has(o.digest)) continue // counted with the files
      removed.push(o.digest)
      freedBytes += o.size
    }
    if (dryRun) continue
    for (const o of pack.index.objects) if (reachable.has(o.digest)) store.objectFile(o.digest)
    await store.sync()
    store.packs.remove(pack)
  }
  return { removed, freedBytes }
}

async function removeStaleTemps(store: Store): Promise<void> {
  const dir = store.path('tmp')
  const pending = await pendingStaging(store)
  for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
    if (name !== pending) await removeIfStale(`${dir}/${name}`)
  }
}

/** Packs whose index never came (a writer crashed between the two), once old enough to be a crashed writer's: no reader looks at them. */
async function removeUncommittedPacks(store: Store): Promise<void> {
  const names = await fs.readdir(store.packs.dir).catch(() => [] as string[])
  for (const name of names) {
    if (/^[0-9a-f]{64}\.pack$/.test(name) && !names.includes(`${name.slice(0, 64)}.idx`)) await removeIfStale(`${store.packs.dir}/${name}`)
  }
}

/** A temp file (or directory) old enough to be a crashed writer's. */
async function removeIfStale(path: string): Promise<void> {
  const st = await fs.stat(path).catch(() => null)
  if (st && Date.now() - st.mtimeMs > STALE_TEMP_MS) await fs.rm(path, { recursive: true, force: true })
}

/** The name under `tmp/` of the staging directory an interrupted checkout still needs. */
async function pendingStaging(store: Store): Promise<string | null> {
  const text = readStateTextOrNull(store.path(CHECKOUT_JOURNAL))
  try {
    return text === null ? null : String((JSON.parse(text) as { staging?: unknown }).staging)
  } catch {
    return null // a torn journal is never run: its staging is a leftover like any other
  }
}

async function countExpired(store: Store, cutoff: Date | null): Promise<number> {
  let n = 0
  for (const log of await listReflogs(store)) n += (await readReflog(store, log)).filter((e) => !isLive(e, cutoff)).length
  return n
}
