import { type Lock, acquireLock } from '../../store/lockFile.js'
import type { Store } from '../../store/Store.js'
import { branchesDir } from './branchStore.js'

/**
 * The lock under which branches are registered (and base directories taken away to be
 * advanced): no branch can start on a base directory while it is held.
 */
export function creationLock(store: Store): Promise<Lock> {
  return acquireLock(branchesDir(store, 'locks', 'create.lock'), { what: 'the branch creation lock' })
}
