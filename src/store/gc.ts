import { promises as fs } from 'node:fs'
import type { Digest } from './digest.js'
import { gcRoots } from './gcRoots.js'
import { listObjects, walkGraph } from './objectGraph.js'
import type { Store } from './Store.js'
import { withGcLock } from './storeLock.js'

export interface GcResult {
  kept: number
  removed: Digest[]
  freedBytes: number
}

/** Files in the stores `tmp/` older than this are leftovers of a crashed writer. */
const STALE_TEMP_MS = 60 * 60 * 1000

/**
 * Drop every object that no ref, HEAD or reflog entry reaches. Runs with all writers
 * excluded (see storeLock), so an object a concurrent snapshot just wrote but has not yet
 * referenced is never taken. Caches that name objects (the stat cache) are dropped when
 * anything was removed, so they can never vouch for an object that is gone.
 */
export async function gc({ store, dryRun = false }: { store: Store; dryRun?: boolean }): Promise<GcResult> {
  return withGcLock(store, async () => {
    const { reachable } = await walkGraph(store, await gcRoots(store))
    const removed: Digest[] = []
    let freedBytes = 0
    for (const digest of await listObjects(store)) {
      if (reachable.has(digest)) continue
      const path = store.objectPath(digest)
      const st = await fs.stat(path).catch(() => null)
      if (!st) continue
      freedBytes += st.size
      removed.push(digest)
      if (!dryRun) await fs.rm(path, { force: true })
    }
    if (!dryRun) {
      await removeStaleTemps(store)
      if (removed.length > 0) await fs.rm(store.path('index'), { force: true })
    }
    return { kept: reachable.size, removed, freedBytes }
  })
}

async function removeStaleTemps(store: Store): Promise<void> {
  const dir = store.path('tmp')
  for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
    const st = await fs.stat(`${dir}/${name}`).catch(() => null)
    if (st && Date.now() - st.mtimeMs > STALE_TEMP_MS) await fs.rm(`${dir}/${name}`, { recursive: true, force: true })
  }
}
