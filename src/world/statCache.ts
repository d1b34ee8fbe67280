import { readFileSync } from 'node:fs'
import type { Stats } from 'node:fs'
import type { Digest } from '../store/digest.js'
import type { Store } from '../store/Store.js'
import { atomicWrite } from '../util/atomicWrite.js'

/** What the cache knows of a file's content, when its stat still matches. */
export interface CachedContent {
  content: Digest
  chunked: boolean
}

/** [size, mtime ms, ctime ms, inode, executable, content digest, chunked] — compact, since a workspace has many. */
type Row = [number, number, number, number, 0 | 1, Digest, 0 | 1]

interface IndexFile {
  kind: 'stat-cache'
  schemaVersion: 2
  workspace: string
  files: Record<string, Row>
  trees: Digest[]
}

/** A few coarse-clock ticks (one tick is at most 10 ms at HZ=100). */
const RACY_WINDOW_MS = 50

/**
 * The stat cache (`index` in the store): per path, the size, mtime and ctime (as Node
 * reports them: milliseconds with the kernel's sub-millisecond fraction) and the inode
 * seen when the file was last hashed. A file whose stat still matches is not read again.
 * Plain (not bigint) stats keep a warm scan of many files free of allocations.
 * Files modified within RACY_WINDOW_MS of the scan's start are
 * not cached (the "racily clean" case: file times come from the kernel's coarse clock, so a
 * write in the same tick as our read would leave the times unchanged). Tree ids seen last
 * time are remembered so an unchanged directory's tree is not looked up again.
 * Rows are kept as parsed and reused when unchanged: a warm scan allocates little.
 */
export class StatCache {
  private readonly next: Record<string, Row> = Object.create(null) as Record<string, Row>
  private readonly nextTrees = new Set<Digest>()
  private nextCount = 0
  private dirty = false

  private constructor(
    private readonly store: Store,
    private readonly workspace: string,
    private readonly rows: Record<string, Row>,
    private readonly rowCount: number,
    private readonly trees: Set<Digest>,
  ) {}

  static load(store: Store, workspace: string): StatCache {
    let parsed: IndexFile | null = null
    try {
      parsed = JSON.parse(readFileSync(store.path('index'), 'utf8')) as IndexFile
    } catch {
      // no cache, or a torn one: start cold
    }
    if (parsed?.kind !== 'stat-cache' || parsed.schemaVersion !== 2 || parsed.workspace !== workspace || typeof parsed.files !== 'object') {
      return new StatCache(store, workspace, Object.create(null) as Record<string, Row>, 0, new Set())
    }
    return new StatCache(store, workspace, parsed.files, Object.keys(parsed.files).length, new Set(parsed.trees ?? []))
  }

  /** The cached content of `path` if `st` shows it unchanged since it was hashed. */
  lookup(path: string, st: Stats, executable: boolean): CachedContent | null {
    const r = this.rows[path]
    if (!r || r[0] !== st.size || r[1] !== st.mtimeMs || r[2] !== st.ctimeMs || r[3] !== st.ino || r[4] !== (executable ? 1 : 0)) return null
    if (typeof r[5] !== 'string' || !r[5].startsWith('sha256:')) return null
    return { content: r[5], chunked: r[6] === 1 }
  }

  knowsTree(digest: Digest): boolean {
    return this.trees.has(digest)
  }

  /** Record what this scan saw; `scanStartNs` guards against racily clean entries. */
  remember(path: string, st: Stats, executable: boolean, content: Digest, chunked: boolean, scanStartMs: number): void {
    const old = this.rows[path]
    if (old && old[5] === content && old[0] === st.size && old[1] === st.mtimeMs && old[2] === st.ctimeMs && old[3] === st.ino) {
      this.next[path] = old
      this.nextCount++
      return
    }
    this.dirty = true
    if (st.mtimeMs >= scanStartMs - RACY_WINDOW_MS || st.ctimeMs >= scanStartMs - RACY_WINDOW_MS) return
    this.next[path] = [st.size, st.mtimeMs, st.ctimeMs, st.ino, executable ? 1 : 0, content, chunked ? 1 : 0]
    this.nextCount++
  }

  rememberTree(digest: Digest): void {
    if (!this.trees.has(digest)) this.dirty = true
    this.nextTrees.add(digest)
  }

  /** Write this scan's view as the new cache (a cache: atomic, but not fsynced). Skipped when nothing changed. */
  async save(): Promise<void> {
    if (!this.dirty && this.nextCount === this.rowCount && this.nextTrees.size === this.trees.size) return
    const index: IndexFile = { kind: 'stat-cache', schemaVersion: 2, workspace: this.workspace, files: this.next, trees: [...this.nextTrees] }
    await atomicWrite(this.store.path('index'), JSON.stringify(index))
  }
}
