import { type Lock, acquireLock } from '../store/lockFile.js'
import type { Store } from '../store/Store.js'
import { branchesDir } from './branchStore.js'

/** Per store, the end of this process's queue for the creation lock. */
const queues = new Map<string, Promise<void>>()

/**
 * The lock under which branches are registered (and base views taken away to be
 * advanced): no branch can start on a base view while it is held. Callers of this process
 * queue for it here, one after another, instead of all polling the lock file with backoff
 * (16 branches made at once took a second that way).
 */
export async function creationLock(store: Store): Promise<Lock> {
  const previous = queues.get(store.root) ?? Promise.resolve()
  let done!: () => void
  const mine = new Promise<void>((resolve) => (done = resolve))
  const tail = previous.then(() => mine)
  queues.set(store.root, tail)
  await previous
  const finish = () => {
    done()
    if (queues.get(store.root) === tail) queues.delete(store.root)
  }
  try {
    const lock = await acquireLock(branchesDir(store, 'locks', 'create.lock'), { what: 'the branch creation lock' })
    return { path: lock.path, release: () => lock.release().finally(finish) }
  } catch (err) {
    finish()
    throw err
  }
}
