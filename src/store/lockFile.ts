import { lstatSync, rmSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { LockTimeoutError, StoreCorruptError } from '../errors/index.js'
import { errnoCode, inParentDir } from '../util/fsx.js'
import { readStateTextOrNull } from './readStateFile.js'

interface LockHolder {
  pid: number
  host: string
  at: string
}

export interface Lock {
  readonly path: string
  release(): Promise<void>
}

/** True when a lock's holder is a process of this host that no longer runs. */
export function holderIsDead(holder: LockHolder): boolean {
  if (holder.host !== hostname()) return false
  try {
    process.kill(holder.pid, 0)
    return false
  } catch (err) {
    return errnoCode(err) === 'ESRCH'
  }
}

// Lock files are a few bytes: read and written synchronously (microseconds, where each
// trip through Node's thread pool costs far more), behind async signatures for the waits.

function readHolder(path: string): LockHolder | null {
  try {
    const text = readStateTextOrNull(path)
    return text === null ? null : (JSON.parse(text) as LockHolder)
  } catch {
    return null
  }
}

/** Create `path` exclusively, recording our pid. Null when someone else has it. */
export async function tryCreateLock(path: string): Promise<Lock | null> {
  try {
    const holder: LockHolder = { pid: process.pid, host: hostname(), at: new Date().toISOString() }
    inParentDir(path, () => writeFileSync(path, JSON.stringify(holder), { flag: 'wx' }))
  } catch (err) {
    if (errnoCode(err) === 'EEXIST') return null
    throw err
  }
  return { path, release: async () => rmSync(path, { force: true }) }
}

/** Remove a lock file left by a process that died while holding it. Returns true if removed. */
export async function breakIfStale(path: string): Promise<boolean> {
  const holder = readHolder(path)
  // An unreadable holder is a lock being written right now, or a torn one: only age tells.
  if (holder === null) {
    const st = lstatSync(path, { throwIfNoEntry: false })
    if (st === undefined) return true
    if (st.isDirectory()) throw new StoreCorruptError(`${path} is a directory where a lock file belongs: remove it once no forkpoint command runs here`, { path })
    if (Date.now() - st.mtimeMs < 10_000) return false
  } else if (!holderIsDead(holder)) {
    return false
  }
  rmSync(path, { force: true })
  return true
}

const MAX_TIMER_MS = 2 ** 31 - 1

/** Per lock path, the end of this process's queue for it. */
const queues = new Map<string, Promise<void>>()

/**
 * Take an exclusive lock file, waiting (with backoff) while a live process holds it and
 * breaking it when its holder died. Callers of this process queue for a lock one after
 * another instead of all polling its file with backoff (16 branches made at once took a
 * second that way). Throws LockTimeoutError after `timeoutMs`.
 */
export async function acquireLock(path: string, { timeoutMs = 30_000, what = 'lock' } = {}): Promise<Lock> {
  const deadline = Date.now() + timeoutMs
  const turn = await waitForTurn(path, deadline, what)
  try {
    const lock = await pollLock(path, deadline, what)
    return { path, release: () => lock.release().finally(turn) }
  } catch (err) {
    turn()
    throw err
  }
}

/** Wait until this process's earlier callers for `path` are done; returns the call that ends this caller's turn. */
async function waitForTurn(path: string, deadline: number, what: string): Promise<() => void> {
  const previous = queues.get(path) ?? Promise.resolve()
  let done!: () => void
  const mine = new Promise<void>((resolve) => (done = resolve))
  const tail = previous.then(() => mine)
  queues.set(path, tail)
  const end = () => {
    done()
    if (queues.get(path) === tail) queues.delete(path)
  }
  let timer: NodeJS.Timeout | undefined
  // setTimeout fires at once beyond 2^31-1 ms: a longer (or infinite) wait has no timer
  const wait = deadline - Date.now()
  const timedOut = new Promise<'timeout'>((resolve) => {
    if (wait <= MAX_TIMER_MS) timer = setTimeout(() => resolve('timeout'), Math.max(0, wait))
  })
  const outcome = await Promise.race([previous, timedOut]).finally(() => clearTimeout(timer))
  if (outcome === 'timeout') {
    end()
    throw new LockTimeoutError(`timed out waiting for ${what} (${path}), held in this process`, { path, holder: { pid: process.pid } })
  }
  return end
}

async function pollLock(path: string, deadline: number, what: string): Promise<Lock> {
  let delay = 2
  for (;;) {
    const lock = await tryCreateLock(path)
    if (lock) return lock
    if (await breakIfStale(path)) continue
    if (Date.now() > deadline) {
      const holder = readHolder(path)
      throw new LockTimeoutError(`timed out waiting for ${what} (${path}) held by pid ${holder?.pid ?? '?'}`, { path, holder })
    }
    await new Promise((r) => setTimeout(r, delay))
    delay = Math.min(delay * 2, 100)
  }
}
