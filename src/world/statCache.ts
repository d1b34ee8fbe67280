import { readFileSync } from 'node:fs'
import type { BigIntStats } from 'node:fs'
import { type Digest, isDigest } from '../store/digest.js'
import type { Store } from '../store/Store.js'
import { atomicWrite } from '../util/atomicWrite.js'

/** What a file looked like when it was last hashed; if it still looks so, its content is unchanged. */
export interface CachedFile {
  size: number
  mtimeNs: string
  ctimeNs: string
  ino: string
  executable: boolean
  /** The blob, or the chunks object for a large file. */
  content: Digest
  chunked: boolean
}

type Row = [number, string, string, string, 0 | 1, string, 0 | 1]

interface IndexFile {
  kind: 'stat-cache'
  schemaVersion: 1
  workspace: string
  files: Record<string, Row>
  trees: string[]
}

/**
 * The stat cache (`index` in the store): per path, the size, mtime and ctime in
 * nanoseconds and the inode seen when the file was last hashed. A file whose stat still
 * matches is not read again. Files modified in the last second of a scan are not cached
 * (the "racily clean" case: a write in the same clock tick would go unseen). Tree ids seen
 * last time are remembered so an unchanged directory's tree is not looked up again.
 */
export class StatCache {
  private readonly files = new Map<string, CachedFile>()
  private readonly trees = new Set<string>()
  private readonly nextFiles = new Map<string, CachedFile>()
  private readonly nextTrees = new Set<string>()

  private constructor(
    private readonly store: Store,
    private readonly workspace: string,
  ) {}

  static load(store: Store, workspace: string): StatCache {
    const cache = new StatCache(store, workspace)
    let parsed: IndexFile | null = null
    try {
      parsed = JSON.parse(readFileSync(store.path('index'), 'utf8')) as IndexFile
    } catch {
      return cache // no cache, or a torn one: start cold
    }
    if (parsed?.kind !== 'stat-cache' || parsed.workspace !== workspace) return cache
    for (const [path, r] of Object.entries(parsed.files ?? {})) {
      if (Array.isArray(r) && isDigest(r[5])) {
        cache.files.set(path, { size: r[0], mtimeNs: r[1], ctimeNs: r[2], ino: r[3], executable: r[4] === 1, content: r[5], chunked: r[6] === 1 })
      }
    }
    for (const t of parsed.trees ?? []) cache.trees.add(t)
    return cache
  }

  /** The cached content of `path` if `st` shows it unchanged since it was hashed. */
  lookup(path: string, st: BigIntStats, executable: boolean): CachedFile | null {
    const c = this.files.get(path)
    if (!c) return null
    const same =
      c.size === Number(st.size) && c.mtimeNs === String(st.mtimeNs) && c.ctimeNs === String(st.ctimeNs) && c.ino === String(st.ino) && c.executable === executable
    return same ? c : null
  }

  knowsTree(digest: Digest): boolean {
    return this.trees.has(digest)
  }

  /** Record what this scan saw; `scanStartNs` guards against racily clean entries. */
  remember(path: string, st: BigIntStats, executable: boolean, content: Digest, chunked: boolean, scanStartNs: bigint): void {
    if (st.mtimeNs >= scanStartNs - 1_000_000_000n || st.ctimeNs >= scanStartNs - 1_000_000_000n) return
    this.nextFiles.set(path, { size: Number(st.size), mtimeNs: String(st.mtimeNs), ctimeNs: String(st.ctimeNs), ino: String(st.ino), executable, content, chunked })
  }

  rememberTree(digest: Digest): void {
    this.nextTrees.add(digest)
  }

  /** True when this scan's view differs from the loaded one (so saving is worth it). */
  get changed(): boolean {
    if (this.nextFiles.size !== this.files.size || this.nextTrees.size !== this.trees.size) return true
    for (const t of this.nextTrees) if (!this.trees.has(t)) return true
    for (const [path, n] of this.nextFiles) {
      const o = this.files.get(path)
      if (!o || o.mtimeNs !== n.mtimeNs || o.ctimeNs !== n.ctimeNs || o.ino !== n.ino || o.content !== n.content) return true
    }
    return false
  }

  /** Write this scan's view as the new cache (a cache: atomic, but not fsynced). */
  async save(): Promise<void> {
    if (!this.changed) return
    const files: Record<string, Row> = {}
    for (const [path, c] of this.nextFiles) files[path] = [c.size, c.mtimeNs, c.ctimeNs, c.ino, c.executable ? 1 : 0, c.content, c.chunked ? 1 : 0]
    const index: IndexFile = { kind: 'stat-cache', schemaVersion: 1, workspace: this.workspace, files, trees: [...this.nextTrees] }
    await atomicWrite(this.store.path('index'), JSON.stringify(index))
  }
}
