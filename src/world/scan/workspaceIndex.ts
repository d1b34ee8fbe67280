import type { Stats } from 'node:fs'
import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { atomicWriteSync } from '../../util/atomicWrite.js'
import { type FilesCheck, STAT_SLOT, lstat, statStillHolds } from './lstatNames.js'
import { readStateOrNull } from '../../store/readStateFile.js'
import {
  ALWAYS_LIST,
  CHUNKED,
  DIGEST_BYTES,
  DIR_ROW,
  DIR_RACY,
  DIR_STAT_FIELDS,
  type IndexColumns,
  KIND_MASK,
  type ReadIndex,
  RACY,
  STAT_FIELDS,
  decodeIndex,
  encodeIndex,
} from './indexFile.js'

/** A few coarse-clock ticks (one tick is at most 10 ms at HZ=100). */
const RACY_WINDOW_MS = 50
/** File systems that keep whole seconds (FAT keeps 2 s steps, HFS+ and ext3 1 s). */
const COARSE_RACY_WINDOW_MS = 2000

/**
 * Whether times this close to the scan's start could hide a change made in the same
 * clock tick as the scan looked (it would leave them as they are). Whole-second times
 * mean a file system with one-second (or two-second) ticks: a wider window.
 */
export function tooRecent(mtimeMs: number, ctimeMs: number, scanStartMs: number): boolean {
  const window = mtimeMs % 1000 === 0 && ctimeMs % 1000 === 0 ? COARSE_RACY_WINDOW_MS : RACY_WINDOW_MS
  return mtimeMs >= scanStartMs - window || ctimeMs >= scanStartMs - window
}

/**
 * The index the last write scan left (`index` in the store): per entry of every
 * directory, its stat (size, mtime, ctime as Node reports them, inode) and content
 * digest; per directory, its own stat and the tree id built from its entries. A file
 * whose stat still matches is not read again; a directory whose stat still matches is
 * not listed again (adding, removing or renaming an entry changes it), and one whose
 * entries all match keeps its tree id without building the tree. It is only a cache:
 * anything unreadable means a cold scan.
 */
export class PreviousIndex {
  private readonly dirIndex = new Map<string, number>()
  private readonly nameMaps = new Map<number, Map<string, number>>()
  private readonly filesCheck: FilesCheck

  private constructor(readonly c: ReadIndex) {
    c.dirPaths.forEach((path, i) => this.dirIndex.set(path, i))
    this.filesCheck = lstat.startFilesCheck(c.workspace, c)
  }

  static load(store: Store, workspace: string): PreviousIndex {
    let columns: ReadIndex | null = null
    try {
      const bytes = readStateOrNull(store.path('index'))
      columns = bytes && decodeIndex(bytes)
    } catch {
      // no index yet: a cold scan
    }
    return new PreviousIndex(columns?.workspace === workspace ? columns : emptyColumns(workspace))
  }

  /** The directory at `rel` as last seen, or -1. */
  dir(rel: string): number {
    return this.dirIndex.get(rel) ?? -1
  }

  /** The row of `name` in directory `dir`, trying the `position`-th row first (read order rarely changes). */
  row(dir: number, name: string, position: number): number {
    const first = this.c.dirRows[2 * dir]!
    const count = this.c.dirRows[2 * dir + 1]!
    if (position < count && this.c.names[first + position] === name) return first + position
    let byName = this.nameMaps.get(dir)
    if (!byName) {
      byName = new Map()
      for (let r = first; r < first + count; r++) byName.set(this.c.names[r]!, r)
      this.nameMaps.set(dir, byName)
    }
    return byName.get(name) ?? -1
  }

  rowCount(dir: number): number {
    return this.c.dirRows[2 * dir + 1]!
  }

  /** The kind of `row`, or -1 for no row. */
  kind(row: number): number {
    return row < 0 ? -1 : this.c.kinds[row]! & KIND_MASK
  }

  /**
   * Whether directory `dir`'s entries are still its rows: its stat matches, the stat was
   * not too recent to vouch for them, and it holds nothing that makes it listed every time.
   */
  listStillHolds(dir: number, st: Stats): boolean {
    if ((this.c.dirFlags[dir]! & (ALWAYS_LIST | DIR_RACY)) !== 0) return false
    return this.sameDirStat(dir, st)
  }

  private sameDirStat(dir: number, st: Stats): boolean {
    const s = this.c.dirStats
    const at = dir * DIR_STAT_FIELDS
    return s[at] === st.mtimeMs && s[at + 1] === st.ctimeMs && s[at + 2] === st.ino
  }

  /** Whether every file row of directory `dir` still has its stat (checked from when the index was loaded): then all its rows hold as they are. */
  filesStillHold(dir: number): boolean {
    return this.filesCheck.holds(dir)
  }

  /** The walk asks `filesStillHold` no more. */
  doneWalking(): void {
    this.filesCheck.stop()
  }

  /** Whether directory `dir` was saved with this stat and these flags (else the index is due to be saved again). */
  dirRecordIs(dir: number, st: Stats, flags: number): boolean {
    return this.c.dirFlags[dir] === flags && this.sameDirStat(dir, st)
  }

  /** Whether `row` vouches for the file whose stat is in `slot` of `lstatNames`' result `stats`. */
  vouchesFor(row: number, stats: Float64Array, slot: number): boolean {
    return statStillHolds(this.c, row, stats, slot)
  }
}

/**
 * The flags a directory is saved with: whether it must be listed every time, and whether
 * its stat is too recent to vouch for its list (a change in the same clock tick as the
 * listing would leave the stat as it is).
 */
export function dirFlags(st: Stats, alwaysList: boolean, scanStartMs: number): number {
  return (alwaysList ? ALWAYS_LIST : 0) | (tooRecent(st.mtimeMs, st.ctimeMs, scanStartMs) ? DIR_RACY : 0)
}

function emptyColumns(workspace: string): ReadIndex {
  const none = { dirStats: new Float64Array(0), dirFlags: new Uint8Array(0), rulesKey: new Uint8Array(DIGEST_BYTES) }
  return {
    workspace,
    nameBytes: new Uint8Array(0),
    rows: 0,
    names: [],
    targets: [],
    kinds: new Uint8Array(0),
    stats: new Float64Array(0),
    digests: new Uint8Array(0),
    dirPaths: [],
    dirRows: new Uint32Array(0),
    dirTrees: new Uint8Array(0),
    ...none,
  }
}

/** The index a scan builds, row by row, to save when the scan wrote a snapshot. */
export class NextIndex {
  rows = 0
  private readonly names: string[] = []
  private readonly targets: string[] = []
  private kinds: Uint8Array
  private stats: Float64Array
  private digests: Buffer
  private readonly dirPaths: string[] = []
  private readonly dirRows: number[] = []
  private dirTrees: Buffer
  private readonly dirStats: number[] = []
  private readonly dirFlags: number[] = []
  private rulesKey: Uint8Array = new Uint8Array(DIGEST_BYTES)

  constructor(
    private readonly workspace: string,
    capacity: { rows: number; dirs: number },
  ) {
    const rows = Math.max(64, capacity.rows)
    this.kinds = new Uint8Array(rows)
    this.stats = new Float64Array(rows * STAT_FIELDS)
    this.digests = Buffer.alloc(rows * DIGEST_BYTES)
    this.dirTrees = Buffer.alloc(Math.max(16, capacity.dirs) * DIGEST_BYTES)
  }

  addRow(name: string, kind: number, target = ''): number {
    if (this.rows === this.kinds.length) this.grow()
    this.names.push(name)
    this.targets.push(target)
    this.kinds[this.rows] = kind
    return this.rows++
  }

  kind(row: number): number {
    return this.kinds[row]! & KIND_MASK
  }

  /** Append directory `dir`'s rows of `previous` as they are (stat, content, flags); returns the first. */
  copyRows(previous: PreviousIndex, dir: number): number {
    const c = previous.c
    const from = c.dirRows[2 * dir]!
    const count = previous.rowCount(dir)
    while (this.rows + count > this.kinds.length) this.grow()
    appendAll(this.names, c.names, from, count)
    appendAll(this.targets, c.targets, from, count)
    this.kinds.set(c.kinds.subarray(from, from + count), this.rows)
    this.stats.set(c.stats.subarray(from * STAT_FIELDS, (from + count) * STAT_FIELDS), this.rows * STAT_FIELDS)
    this.digests.set(c.digests.subarray(from * DIGEST_BYTES, (from + count) * DIGEST_BYTES), this.rows * DIGEST_BYTES)
    const first = this.rows
    this.rows += count
    return first
  }

  /** The next directory row from `row` on (before `end`), or -1: a search in the kind bytes, not a loop over rows. */
  nextDirRow(row: number, end: number): number {
    const found = this.kinds.subarray(row, end).indexOf(DIR_ROW) // a directory row has no flag bits
    return found < 0 ? -1 : row + found
  }

  chunked(row: number): boolean {
    return (this.kinds[row]! & CHUNKED) !== 0
  }

  name(row: number): string {
    return this.names[row]!
  }

  target(row: number): string {
    return this.targets[row]!
  }

  size(row: number): number {
    return this.stats[row * STAT_FIELDS]!
  }

  /** The stat in `slot` of `lstatNames`' result `stats`. */
  setStat(row: number, stats: Float64Array, slot: number): void {
    const at = row * STAT_FIELDS
    const from = slot * STAT_SLOT + 1 // after the mode
    for (let i = 0; i < STAT_FIELDS; i++) this.stats[at + i] = stats[from + i]!
  }

  /** The content as found in `previous` (its stat vouched for it). */
  copyContent(row: number, previous: PreviousIndex, from: number): void {
    this.kinds[row]! |= previous.c.kinds[from]! & CHUNKED
    copyBytes(previous.c.digests, from * DIGEST_BYTES, this.digests, row * DIGEST_BYTES, DIGEST_BYTES)
  }

  /**
   * The content just hashed. A stat too recent to vouch for the content next time (racily
   * clean: file times come from the kernel's coarse clock, so a write in the tick of our
   * read leaves them unchanged), or a size that changed while the file was read, is kept
   * but marked not to be trusted.
   */
  setContent(row: number, content: Digest, chunked: boolean, size: number, scanStartMs: number): void {
    this.digests.write(content.slice(7), row * DIGEST_BYTES, DIGEST_BYTES, 'hex')
    this.settle(row, chunked, size, scanStartMs)
  }

  /** `setContent` of a blob whose digest comes as raw bytes. */
  setContentBytes(row: number, digest: Uint8Array, size: number, scanStartMs: number): void {
    this.digests.set(digest, row * DIGEST_BYTES)
    this.settle(row, false, size, scanStartMs)
  }

  private settle(row: number, chunked: boolean, size: number, scanStartMs: number): void {
    const at = row * STAT_FIELDS
    const untrusted = this.stats[at]! !== size || tooRecent(this.stats[at + 1]!, this.stats[at + 2]!, scanStartMs)
    this.stats[at] = size
    this.kinds[row]! |= (chunked ? CHUNKED : 0) | (untrusted ? RACY : 0)
  }

  content(row: number): Digest {
    return `sha256:${this.digests.toString('hex', row * DIGEST_BYTES, (row + 1) * DIGEST_BYTES)}`
  }

  /** A directory's rows, its stat taken before it was listed, and its flags (`dirFlags`). */
  addDir(path: string, first: number, count: number, st: Stats, flags: number): number {
    const d = this.dirPaths.length
    if ((d + 1) * DIGEST_BYTES > this.dirTrees.length) this.dirTrees = grown(this.dirTrees, this.dirTrees.length * 2)
    this.dirPaths.push(path)
    this.dirRows.push(first, count)
    this.dirStats.push(st.mtimeMs, st.ctimeMs, st.ino)
    this.dirFlags.push(flags)
    return d
  }

  setRulesKey(key: Uint8Array): void {
    this.rulesKey = key
  }

  /** Whether the ignore rules of this scan are those in force when `previous` was saved. */
  sameRulesAs(previous: PreviousIndex): boolean {
    return Buffer.compare(this.rulesKey, previous.c.rulesKey) === 0
  }

  dirPath(dir: number): string {
    return this.dirPaths[dir]!
  }

  dirFirst(dir: number): number {
    return this.dirRows[2 * dir]!
  }

  dirCount(dir: number): number {
    return this.dirRows[2 * dir + 1]!
  }

  setDirTree(dir: number, tree: Digest): void {
    this.dirTrees.write(tree.slice(7), dir * DIGEST_BYTES, DIGEST_BYTES, 'hex')
  }

  copyDirTree(dir: number, previous: PreviousIndex, from: number): void {
    this.dirTrees.set(previous.c.dirTrees.subarray(from * DIGEST_BYTES, (from + 1) * DIGEST_BYTES), dir * DIGEST_BYTES)
  }

  dirTree(dir: number): Digest {
    return `sha256:${this.dirTrees.toString('hex', dir * DIGEST_BYTES, (dir + 1) * DIGEST_BYTES)}`
  }

  /** Write the index (atomic; not fsynced: a lost index only costs a cold scan). */
  save(store: Store): void {
    const columns: IndexColumns = {
      workspace: this.workspace,
      rows: this.rows,
      names: this.names,
      targets: this.targets,
      kinds: this.kinds,
      stats: this.stats,
      digests: this.digests,
      dirPaths: this.dirPaths,
      dirRows: Uint32Array.from(this.dirRows),
      dirTrees: this.dirTrees,
      dirStats: Float64Array.from(this.dirStats),
      dirFlags: Uint8Array.from(this.dirFlags),
      rulesKey: this.rulesKey,
    }
    atomicWriteSync(store.path('index'), encodeIndex(columns))
  }

  private grow(): void {
    const rows = this.kinds.length * 2
    const kinds = new Uint8Array(rows)
    kinds.set(this.kinds)
    this.kinds = kinds
    const stats = new Float64Array(rows * STAT_FIELDS)
    stats.set(this.stats)
    this.stats = stats
    this.digests = grown(this.digests, rows * DIGEST_BYTES)
  }
}

/** A byte loop: for 32 bytes cheaper than the view that `set` would need (one object per row). */
function copyBytes(from: Uint8Array, fromAt: number, to: Uint8Array, toAt: number, length: number): void {
  for (let i = 0; i < length; i++) to[toAt + i] = from[fromAt + i]!
}

/** Push `count` items of `from` from `at` on: in slices (a whole directory at once could pass the argument limit). */
function appendAll<T>(to: T[], from: T[], at: number, count: number): void {
  for (let i = 0; i < count; i += 8192) Array.prototype.push.apply(to, from.slice(at + i, at + Math.min(count, i + 8192)))
}

function grown(buf: Buffer, size: number): Buffer {
  const next = Buffer.alloc(size)
  buf.copy(next)
  return next
}
