import { promises as fs } from 'node:fs'
import type { Store } from '../store/Store.js'
import { atomicWrite } from '../util/atomicWrite.js'
import { exists } from '../util/fsx.js'

/**
 * A file whose presence says the workspace's ledger may hold effects to send (committed, or
 * sent with no answer recorded). Written before such an effect is, removed once none is
 * left, so the automatic recovery at `commit`, `status` and service start reads nothing
 * (one stat) when nothing waits.
 */
const markPath = (store: Store): string => store.path('effects', 'unsent')

export async function markUnsent(store: Store): Promise<void> {
  await fs.mkdir(store.path('effects'), { recursive: true })
  await atomicWrite(markPath(store), '', { fsync: true })
}

export function hasUnsent(store: Store): Promise<boolean> {
  return exists(markPath(store))
}

export async function clearUnsent(store: Store): Promise<void> {
  await fs.rm(markPath(store), { force: true })
}
