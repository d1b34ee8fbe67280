import { randomBytes } from 'node:crypto'
import { promises as fs, statSync } from 'node:fs'
import { join } from 'node:path'
import { LockTimeoutError } from '../errors/index.js'
import { acquireLock, breakIfStale, tryCreateLock } from './lockFile.js'
import type { Store } from './Store.js'

/**
 * Writers and gc exclude each other; writers do not exclude each other (object writes
 * are idempotent renames, refs have their own locks). A writer registers a file under
 * `locks/writers/` and then checks that no gc is announced; gc announces itself with
 * `locks/gc` and then waits for registered writers to finish. Each side writes its own
 * flag before reading the other's, so at most one side proceeds.
 */
export async function withWriteLock<T>(store: Store, fn: () => Promise<T>, { timeoutMs = 60_000 } = {}): Promise<T> {
  const writersDir = store.path('locks', 'writers')
  const gcFlag = store.path('locks', 'gc')
  const mine = join(writersDir, `${process.pid}-${randomBytes(4).toString('hex')}`)
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const lock = await tryCreateLock(mine)
    if (!lock) throw new LockTimeoutError(`could not register writer ${mine}`)
    if (!(await gcAnnounced(gcFlag))) {
      try {
        return await fn()
      } finally {
        await lock.release()
      }
    }
    await lock.release()
    if (Date.now() > deadline) throw new LockTimeoutError('timed out waiting for a running gc to finish', { path: gcFlag })
    await new Promise((r) => setTimeout(r, 20))
  }
}

async function gcAnnounced(flag: string): Promise<boolean> {
  if (statSync(flag, { throwIfNoEntry: false }) === undefined) return false
  return !(await breakIfStale(flag))
}

/** Run `fn` with every writer excluded. */
export async function withGcLock<T>(store: Store, fn: () => Promise<T>, { timeoutMs = 60_000 } = {}): Promise<T> {
  const lock = await acquireLock(store.path('locks', 'gc'), { timeoutMs, what: 'the gc lock' })
  try {
    await waitForWriters(store.path('locks', 'writers'), Date.now() + timeoutMs)
    return await fn()
  } finally {
    await lock.release()
  }
}

async function waitForWriters(dir: string, deadline: number): Promise<void> {
  for (;;) {
    const names = await fs.readdir(dir).catch(() => [] as string[])
    let live = 0
    for (const name of names) if (!(await breakIfStale(join(dir, name)))) live++
    if (live === 0) return
    if (Date.now() > deadline) throw new LockTimeoutError(`timed out waiting for ${live} writer(s) to finish before gc`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
