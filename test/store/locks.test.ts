import { spawnSync } from 'node:child_process'
import { promises as fs } from 'node:fs'
import { hostname } from 'node:os'
import { describe, expect, it, vi } from 'vitest'
import { LockTimeoutError, Store, gc } from '../../src/index.js'
import { readRef, updateRef } from '../../src/store/refs.js'
import { sha256 } from '../../src/objects/digest.js'
import { withGcLock, withWriteLock } from '../../src/store/storeLock.js'
import { acquireLock } from '../../src/store/lockFile.js'
import { tempDir } from '../helpers/tmp.js'

/** The pid of a process that has already exited. */
function deadPid(): number {
  return spawnSync('true').pid
}

async function leaveLock(path: string, pid: number): Promise<void> {
  await fs.mkdir(path.slice(0, path.lastIndexOf('/')), { recursive: true })
  await fs.writeFile(path, JSON.stringify({ pid, host: hostname(), at: new Date().toISOString() }))
}

describe('locks', () => {
  it('a ref lock left by a dead process is broken, and the ref moves', async () => {
    const store = await Store.init(tempDir())
    await leaveLock(store.path('refs/heads/main.lock'), deadPid())
    await updateRef({ store, name: 'refs/heads/main', id: sha256('x'), message: 'after a crash' })
    expect(await readRef(store, 'refs/heads/main')).toBe(sha256('x'))
    await expect(fs.stat(store.path('refs/heads/main.lock'))).rejects.toThrow(/ENOENT/)
  })

  it('a lock held by a live process times out with LockTimeoutError (exit 3) naming the holder', async () => {
    const store = await Store.init(tempDir())
    const path = store.path('refs/heads/main.lock')
    await leaveLock(path, process.pid)
    const err = await acquireLock(path, { timeoutMs: 150, what: 'ref main' }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(LockTimeoutError)
    expect((err as LockTimeoutError).exitCode).toBe(3)
    expect((err as LockTimeoutError).message).toContain(`held by pid ${process.pid}`)
  })

  it('callers of one process take a lock in turn, each as soon as the one before releases it; one that waits on its own caller times out', async () => {
    const store = await Store.init(tempDir())
    const path = store.path('locks', 'queue.lock')
    const order: number[] = []
    // With the clock stopped, a queue that polls (sleeps between tries) would never hand the
    // lock over; one that wakes the next caller on release finishes all eight.
    vi.useFakeTimers({ toFake: ['setTimeout', 'setInterval'] })
    try {
      await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          const lock = await acquireLock(path)
          order.push(i)
          await Promise.resolve()
          await lock.release()
        }),
      )
    } finally {
      vi.useRealTimers()
    }
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7])

    const held = await acquireLock(path)
    await expect(acquireLock(path, { timeoutMs: 200 })).rejects.toBeInstanceOf(LockTimeoutError)
    await held.release()
    const again = await acquireLock(path, { timeoutMs: 200 }) // the timed-out caller left the queue
    const patient = acquireLock(path, { timeoutMs: Number.POSITIVE_INFINITY }) // no timer: it waits as long as it takes
    await new Promise((r) => setTimeout(r, 100))
    await again.release()
    await (await patient).release()
  })

  it('a running gc holds writers off until it is done; a writer times out if it waits too long', async () => {
    const store = await Store.init(tempDir())
    const order: string[] = []
    let releaseGc!: () => void
    const gcHeld = new Promise<void>((r) => (releaseGc = r))
    const running = withGcLock(store, async () => {
      order.push('gc start')
      await gcHeld
      order.push('gc end')
    })
    await expect.poll(() => order.length, { timeout: 30_000 }).toBeGreaterThan(0) // gc holds its lock
    await expect(withWriteLock(store, async () => order.push('impatient writer'), { timeoutMs: 100 })).rejects.toBeInstanceOf(LockTimeoutError)
    const writer = withWriteLock(store, async () => order.push('writer'))
    await new Promise((r) => setTimeout(r, 100))
    releaseGc()
    await Promise.all([running, writer])
    expect(order).toEqual(['gc start', 'gc end', 'writer'])
  })

  it('a running writer holds gc off until it is done', async () => {
    const store = await Store.init(tempDir())
    const order: string[] = []
    let finishWrite!: () => void
    const writing = withWriteLock(store, async () => {
      order.push('write start')
      await new Promise<void>((r) => (finishWrite = r))
      order.push('write end')
    })
    await expect.poll(() => order.length, { timeout: 30_000 }).toBeGreaterThan(0) // the writer holds its lock
    const collecting = gc({ store }).then(() => order.push('gc'))
    await new Promise((r) => setTimeout(r, 100))
    finishWrite()
    await Promise.all([writing, collecting])
    expect(order).toEqual(['write start', 'write end', 'gc'])
  })

  it('the gc flag or a writer registration left by a dead process blocks nobody', async () => {
    const store = await Store.init(tempDir())
    await leaveLock(store.path('locks/gc'), deadPid())
    expect(await withWriteLock(store, async () => 'wrote', { timeoutMs: 2000 })).toBe('wrote')
    await leaveLock(store.path('locks/writers/12345-dead'), deadPid())
    expect(await withGcLock(store, async () => 'collected', { timeoutMs: 2000 })).toBe('collected')
  })
})
