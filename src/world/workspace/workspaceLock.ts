import { type Lock, acquireLock } from '../../store/lockFile.js'
import type { Store } from '../../store/Store.js'

/**
 * The lock over the workspace's files: held by whatever reads them as one state or
 * changes them as one step — a snapshot's scan, an in-place checkout, a branch's commit
 * into the workspace — so a snapshot never sees half of a commit (or its staged temps).
 */
export function workspaceLock(store: Store): Promise<Lock> {
  return acquireLock(store.path('locks', 'workspace.lock'), { what: 'the workspace lock (a commit, checkout or snapshot in progress)' })
}

export async function withWorkspaceLock<T>(store: Store, fn: () => Promise<T>): Promise<T> {
  const lock = await workspaceLock(store)
  try {
    return await fn()
  } finally {
    await lock.release()
  }
}
