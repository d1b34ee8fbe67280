import { promises as fs, readFileSync } from 'node:fs'
import { basename, relative, sep } from 'node:path'
import type { AsyncSubscription, Event } from '@parcel/watcher'
import { MissingPackageError, ObjectNotFoundError } from '../errors/index.js'
import type { Digest } from '../objects/digest.js'
import type { Store } from '../store/Store.js'
import { IGNORE_FILES } from '../world/scan/ignoreRules.js'
import { type TreeTotals, rescanPaths } from '../world/scan/rescanPaths.js'
import type { ScanResult } from '../world/scan/scanWorkspace.js'
import { type WorldScanner, fullScanner, withWorldScan } from '../world/scan/snapshotWorkspace.js'
import { isInside } from '../util/isInside.js'
import { TaskQueues } from '../util/TaskQueues.js'
import { requireOptional } from '../util/optionalPackage.js'

/** How long a snapshot waits for the watcher to report its cookie before it scans in full instead. */
const COOKIE_DEADLINE_MS = 10_000

/**
 * A workspace of at most this many files is scanned in full at every snapshot rather than
 * from the watcher's list, whose cookie waits out the watcher's 50 ms batch: a served
 * snapshot after a change is faster so up to about 40,000 files here (`npm run bench --
 * service`), and well under that leaves room for a busy host (docs/service.md).
 */
const SCAN_IN_FULL_UP_TO = 15_000

/**
 * The kernel's inotify queue holds this many events; past it, it drops them. @parcel/watcher
 * reads the overflow event and says nothing (src/linux/InotifyBackend.cc: `// overflow`,
 * `continue`), but a queue that overflowed was drained whole into one batch: a batch of at
 * least half the queue is taken as an overflow.
 */
function overflowBatch(): number {
  const limit = Number(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim())
  return Number.isInteger(limit) && limit > 0 ? Math.max(1, Math.floor(limit / 2)) : 8192
}

/** Where the store's own writes are: never part of the world, and too many to be told of. */
const STORE_NOISE = ['objects', 'branches', 'tmp', 'logs', 'locks', 'refs', 'claude']

/**
 * The workspace as the service keeps it warm: the tree of its last scan, and the paths a
 * native file watcher (@parcel/watcher: inotify here) has reported changed since. A
 * snapshot then reads only those paths (`rescanPaths`). Before it trusts the list it
 * writes a cookie file into the store and waits for the watcher to report it: the
 * watcher's events come in order, so every change made before the snapshot was asked for
 * has been reported by then (the watcher batches events for 50 ms after another: that is
 * the floor of a snapshot that follows a change). When the watcher reports an error or
 * may have dropped events (an overflow), when an ignore file changes, or when the cookie
 * does not come back in time, the next snapshot scans in full.
 */
export class WarmWorld {
  #known: { tree: Digest; totals: TreeTotals; gitignore: boolean } | null = null
  #dirty = new Set<string>()
  #lost: string | null = 'not scanned yet'
  #cookies = new Map<string, () => void>()
  #cookieCount = 0
  #subscription: AsyncSubscription | null = null
  readonly #scans = new TaskQueues()
  readonly #overflowBatch = overflowBatch()

  private constructor(
    readonly store: Store,
    readonly workspace: string,
    private readonly cookieDir: string | null,
    /** Why nothing is watched, when nothing is: every snapshot then scans in full. */
    private readonly unwatched: string | null,
    private readonly scanInFullUpTo: number,
  ) {}

  /**
   * Watch `workspace`; its store's directory must lie inside it for the watcher to be
   * trusted, and @parcel/watcher (an optional package) must be installed: else every
   * snapshot scans in full. So does every snapshot of a workspace whose last scan found at
   * most `scanInFullUpTo` files.
   */
  static async start(store: Store, workspace: string, { scanInFullUpTo = SCAN_IN_FULL_UP_TO }: { scanInFullUpTo?: number } = {}): Promise<WarmWorld> {
    const watcher = isInside(workspace, store.root) ? loadWatcher() : 'the store lies outside the workspace: nothing to time the watcher by'
    if (typeof watcher === 'string') return new WarmWorld(store, workspace, null, watcher, scanInFullUpTo)
    const cookieDir = store.path('service', 'cookies')
    const world = new WarmWorld(store, workspace, cookieDir, null, scanInFullUpTo)
    await fs.rm(cookieDir, { recursive: true, force: true })
    await fs.mkdir(cookieDir, { recursive: true })
    world.#subscription = await watcher.subscribe(workspace, (err, events) => (err ? world.lose(`the watcher failed: ${err.message}`) : world.#take(events)), {
      ignore: STORE_NOISE.map((dir) => store.path(dir)),
    })
    // after subscribing, so nothing changed during this scan goes unreported
    await withWorldScan({ store, workspace, scanner: world.scanner }, (scan) => scan.persist())
    return world
  }

  /** Why the next snapshot scans in full, or null when the watcher's list is trusted. */
  get lost(): string | null {
    return this.unwatched ?? this.#lost
  }

  /** Forget what the watcher said: the next snapshot scans in full (an overflow, a watcher error). */
  lose(reason: string): void {
    this.#lost ??= reason
    this.#dirty.clear()
  }

  /**
   * The scanner for `withWorldScan`: from the changed paths when they can be trusted, else
   * in full. One scan at a time (each takes the list the one before left).
   */
  readonly scanner: WorldScanner = (args) =>
    this.#scans.run('scan', () =>
      this.#scan(args).catch((err: unknown) => {
        // the list was taken and the last tree kept: trusted again, they would miss those changes
        this.lose(`the last scan failed: ${err instanceof Error ? err.message : String(err)}`)
        throw err
      }),
    )

  async #scan({ store, workspace, respectGitignore, onProgress }: Parameters<WorldScanner>[0]): Promise<ScanResult> {
    const last = this.#known?.gitignore === respectGitignore ? this.#known : null
    const known = last !== null && last.totals.files > this.scanInFullUpTo ? last : null
    // the cookie is waited for only when the list will be used: a full scan needs no list
    if (known && this.lost === null && !(await this.#settle())) this.lose('the watcher did not report its cookie in time')
    const trusted = known !== null && this.lost === null
    const paths = [...this.#dirty]
    this.#dirty.clear()
    this.#lost = null // what the watcher reports from here on is the next snapshot's list
    const warm = trusted ? await this.#rescan(known, paths, respectGitignore) : null
    const scan: ScanResult = warm ?? (await fullScanner({ store, workspace, respectGitignore, onProgress }))
    this.#known = { tree: scan.tree, totals: { files: scan.files, bytes: scan.bytes, symlinks: scan.symlinks }, gitignore: respectGitignore }
    return scan
  }

  /**
   * `rescanPaths` from the last scan's tree; null (scan in full) when that tree, or a tree
   * under it, is gone: nothing refers to the tree of a `status` that found changes, and a
   * `gc` takes it.
   */
  async #rescan(known: { tree: Digest; totals: TreeTotals }, paths: string[], respectGitignore: boolean): Promise<ScanResult | null> {
    try {
      return await rescanPaths({ store: this.store, workspace: this.workspace, tree: known.tree, totals: known.totals, paths, respectGitignore })
    } catch (err) {
      if (err instanceof ObjectNotFoundError) return null
      throw err
    }
  }

  async close(): Promise<void> {
    // the watcher fails to remove the watch of a directory the kernel has dropped already (a deleted one); nothing is left to undo then
    await this.#subscription?.unsubscribe().catch(() => undefined)
    this.#subscription = null
  }

  #take(events: Event[]): void {
    if (events.length >= this.#overflowBatch) this.lose(`the watcher reported ${events.length} changes at once: its queue may have overflowed`)
    for (const event of events) {
      if (this.cookieDir && isInside(this.cookieDir, event.path)) {
        this.#cookies.get(basename(event.path))?.()
        continue
      }
      const rel = relative(this.workspace, event.path).split(sep).join('/')
      if (rel === '' || !isInside(this.workspace, event.path) || isInside(this.store.root, event.path)) continue
      if ((IGNORE_FILES as readonly string[]).includes(basename(rel))) this.lose(`${rel} changed: the ignore rules may differ`)
      else if (this.#lost === null) this.#dirty.add(rel)
    }
  }

  /** Write a cookie and wait until the watcher reports it; false when it does not in time. */
  async #settle(): Promise<boolean> {
    const name = `cookie-${process.pid}-${++this.#cookieCount}`
    const reported = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), COOKIE_DEADLINE_MS)
      this.#cookies.set(name, () => {
        clearTimeout(timer)
        resolve(true)
      })
    })
    await fs.writeFile(`${this.cookieDir!}/${name}`, '')
    const ok = await reported
    this.#cookies.delete(name)
    await fs.rm(`${this.cookieDir!}/${name}`, { force: true })
    return ok
  }
}

/** @parcel/watcher, or why there is none (it is not installed: the MissingPackageError's message says how to add it). */
function loadWatcher(): typeof import('@parcel/watcher') | string {
  try {
    return requireOptional<typeof import('@parcel/watcher')>('watcher', '@parcel/watcher')
  } catch (err) {
    if (err instanceof MissingPackageError) return err.message
    throw err
  }
}
