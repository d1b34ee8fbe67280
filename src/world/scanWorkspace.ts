import { createHash } from 'node:crypto'
import { lstatSync, readdirSync, readlinkSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Digest } from '../store/digest.js'
import type { Store } from '../store/Store.js'
import { IGNORE_FILES, type IgnoreRules, ignoreRules } from './ignoreRules.js'
import { DIR_ROW, EXEC_ROW, FILE_ROW, SYMLINK_ROW } from './indexFile.js'
import { hashSmallFiles } from './hashFiles.js'
import { CHUNKING_THRESHOLD, storeFile } from './storeFile.js'
import { type Tree, type TreeEntry, dirEntry, fileEntry, symlinkEntry, treeObject } from './Tree.js'
import { NextIndex, PreviousIndex, dirFlags } from './workspaceIndex.js'

export interface ScanOptions {
  store: Store
  /** The workspace root. */
  dir: string
  /** Store new blobs and trees (a snapshot), or only hash them (status). */
  write: boolean
  respectGitignore?: boolean
  onProgress?: (done: number, total: number) => void
}

export interface ScanResult {
  tree: Digest
  files: number
  bytes: number
  /** Files whose content had to be read (not vouched for by the index). */
  hashedFiles: number
  hashedBytes: number
  /** Directories whose entries had to be listed (not vouched for by the index). */
  listedDirs: number
  /** Paths skipped because they are not files, directories or symlinks (sockets, fifos, devices). */
  skipped: string[]
  /**
   * The trees this scan built, by id. A directory the index vouched for is not built: its
   * tree is in the store already (only write scans save the index), so
   * `treeSource(store, scan.trees)` reaches every tree of a scan that wrote nothing.
   */
  trees: Map<Digest, Tree>
  /**
   * After a write scan: make every object written so far durable (with anything the
   * caller added, such as a snapshot object, in the same sync), then save the new index,
   * which may then vouch for them. A no-op for a scan that wrote nothing.
   */
  persist(): Promise<void>
}

interface PendingFile {
  row: number
  abs: string
}

/**
 * Scan a workspace into Merkle trees: regular files with their executable bit, symlinks
 * as their target (never followed), empty directories kept, ignore rules applied, the
 * store's own directory always left out. Files the index vouches for are not read,
 * directories it vouches for are not listed, and directories whose every entry it
 * vouches for keep their tree without building it. A write scan stores what is new; its
 * caller then `persist`s it.
 */
export async function scanWorkspace(opts: ScanOptions): Promise<ScanResult> {
  const root = resolve(opts.dir)
  const previous = PreviousIndex.load(opts.store, root)
  const scanStartMs = Date.now()
  let { next, walk, top } = walkWorkspace(opts, root, previous, scanStartMs, false)
  const sameRules = next.sameRulesAs(previous)
  // Other ignore rules can bring back entries that the lists the index vouched for left out: list everything.
  if (walk.reusedLists > 0 && !sameRules) ({ next, walk, top } = walkWorkspace(opts, root, previous, scanStartMs, true))
  const hashedBytes = await hashPending(opts, next, walk.pending, scanStartMs)
  const trees = buildTrees(opts, next, walk)
  let indexSaved = walk.clean[top]! && !walk.dirRecordsChanged && sameRules // an index that vouched for everything is already right
  const persist = async (): Promise<void> => {
    if (!opts.write) return
    await opts.store.sync()
    if (!indexSaved) next.save(opts.store)
    indexSaved = true
  }
  let files = 0
  let bytes = 0
  for (let row = 0; row < next.rows; row++) {
    const kind = next.kind(row)
    if (kind === FILE_ROW || kind === EXEC_ROW) {
      files++
      bytes += next.size(row)
    }
  }
  return { tree: next.dirTree(top), files, bytes, hashedFiles: walk.pending.length, hashedBytes, listedDirs: walk.listedDirs, skipped: walk.skipped, trees, persist }
}

function walkWorkspace(opts: ScanOptions, root: string, previous: PreviousIndex, scanStartMs: number, listAll: boolean) {
  const next = new NextIndex(root, { rows: previous.c.rows, dirs: previous.c.dirPaths.length })
  const walk = new Walk(resolve(opts.store.root), previous, next, scanStartMs, listAll)
  const rules = createHash('sha256').update(opts.respectGitignore ? 'gitignore\0' : '\0')
  const onRead = (relDir: string, text: string) => rules.update(`${relDir}\0${text}\0`)
  const top = walk.dir(root, '', ignoreRules({ respectGitignore: opts.respectGitignore ?? false, onRead }))
  next.setRulesKey(rules.digest())
  return { next, walk, top }
}

/** What a directory holds, as listed now or as the index last saw it: a row kind (-1: not a file, directory or symlink). */
interface Entry {
  name: string
  kind: number
  /** A symlink's target when it comes from the index. */
  target?: string
}

/** The walk over the directories: rows into `next`, files the index cannot vouch for into `pending`. */
class Walk {
  readonly pending: PendingFile[] = []
  readonly skipped: string[] = []
  /** Per directory of `next`: whether the index vouched for all of it (its tree id is copied). */
  readonly clean: boolean[] = []
  /** Directory rows of `next` to the directory they stand for. */
  readonly subdirOfRow = new Map<number, number>()
  listedDirs = 0
  /** Directories whose entries came from the index, not from listing them. */
  reusedLists = 0
  /** Whether some directory's stat or flags differ from the index's (so it is saved again). */
  dirRecordsChanged = false

  constructor(
    private readonly storeDir: string,
    private readonly previous: PreviousIndex,
    private readonly next: NextIndex,
    private readonly scanStartMs: number,
    private readonly listAll: boolean,
  ) {}

  /** Scan one directory (its rows stay contiguous: subdirectories are entered after). `outer`: the parent's ignore rules. */
  dir(abs: string, rel: string, outer: IgnoreRules): number {
    // Before listing: a change made while it is listed leaves the next scan a different stat. The root may be a symlink: what it lists is its target's.
    const st = rel === '' ? statSync(abs) : lstatSync(abs)
    const before = this.previous.dir(rel)
    const entries = !this.listAll && before >= 0 && this.previous.listStillHolds(before, st) ? this.entriesFromIndex(before) : this.list(abs)
    const rules = outer.enter(abs, rel, (file) => entries.some((e) => e.name === file && e.kind === FILE_ROW))
    let clean = before >= 0
    let alwaysList = false
    const first = this.next.rows
    const subdirs: Array<{ row: number; name: string }> = []
    for (const entry of entries) {
      const name = entry.name
      const childAbs = `${abs}/${name}`
      const position = this.next.rows - first
      if ((IGNORE_FILES as readonly string[]).includes(name)) alwaysList = true
      if (entry.kind === DIR_ROW) {
        if (childAbs === this.storeDir || rules.ignores(name, true)) continue
        const row = this.next.addRow(name, DIR_ROW)
        subdirs.push({ row, name })
        clean &&= this.previous.kind(this.previous.row(before, name, position)) === DIR_ROW
      } else if (entry.kind === SYMLINK_ROW) {
        if (rules.ignores(name, false)) continue
        const target = entry.target ?? readlinkSync(childAbs)
        this.next.addRow(name, SYMLINK_ROW, target)
        const old = clean ? this.previous.row(before, name, position) : -1
        clean &&= this.previous.kind(old) === SYMLINK_ROW && this.previous.c.targets[old] === target
      } else if (entry.kind === FILE_ROW) {
        if (rules.ignores(name, false)) continue
        clean = this.file(name, childAbs, before, position) && clean
      } else if (!rules.ignores(name, false)) {
        this.skipped.push(rel ? `${rel}/${name}` : name)
        alwaysList = true
      }
    }
    const count = this.next.rows - first
    if (before >= 0 && this.previous.rowCount(before) !== count) clean = false
    const flags = dirFlags(st, alwaysList, this.scanStartMs)
    if (before < 0 || !this.previous.dirRecordIs(before, st, flags)) this.dirRecordsChanged = true
    const index = this.next.addDir(rel, first, count, st, flags)
    for (const { row, name } of subdirs) {
      const sub = this.dir(`${abs}/${name}`, rel ? `${rel}/${name}` : name, rules)
      this.subdirOfRow.set(row, sub)
      clean &&= this.clean[sub]!
    }
    this.clean[index] = clean
    if (clean) this.next.copyDirTree(index, this.previous, before)
    return index
  }

  private list(abs: string): Entry[] {
    this.listedDirs++
    return readdirSync(abs, { withFileTypes: true }).map((d) => ({
      name: d.name,
      kind: d.isDirectory() ? DIR_ROW : d.isSymbolicLink() ? SYMLINK_ROW : d.isFile() ? FILE_ROW : -1,
    }))
  }

  /** The entries of a directory that was not changed since the index listed it (a symlink cannot be retargeted in place). */
  private entriesFromIndex(dir: number): Entry[] {
    this.reusedLists++
    const entries: Entry[] = []
    const first = this.previous.c.dirRows[2 * dir]!
    for (let row = first; row < first + this.previous.rowCount(dir); row++) {
      const kind = this.previous.kind(row)
      const name = this.previous.c.names[row]!
      entries.push(kind === SYMLINK_ROW ? { name, kind, target: this.previous.c.targets[row]! } : { name, kind: kind === EXEC_ROW ? FILE_ROW : kind })
    }
    return entries
  }

  /** Add a file's row; its content comes from the previous index when its stat still matches there (true), else it is read later. */
  private file(name: string, abs: string, before: number, position: number): boolean {
    const st = lstatSync(abs)
    const kind = (st.mode & 0o111) !== 0 ? EXEC_ROW : FILE_ROW
    const row = this.next.addRow(name, kind)
    this.next.setStat(row, st)
    const old = before >= 0 ? this.previous.row(before, name, position) : -1
    if (old >= 0 && this.previous.vouchesFor(old, kind, st)) {
      this.next.copyContent(row, this.previous, old)
      return true
    }
    this.pending.push({ row, abs })
    return false
  }
}

/** Read and store (or only hash) the files the index could not vouch for; returns the bytes read. */
async function hashPending(opts: ScanOptions, next: NextIndex, pending: PendingFile[], scanStartMs: number): Promise<number> {
  const small = pending.filter((p) => next.size(p.row) < CHUNKING_THRESHOLD)
  const large = pending.filter((p) => next.size(p.row) >= CHUNKING_THRESHOLD)
  const progress = (done: number) => opts.onProgress?.(done, pending.length)
  const hashed = await hashSmallFiles({ store: opts.store, paths: small.map((p) => p.abs), bytes: small.reduce((n, p) => n + next.size(p.row), 0), write: opts.write, onProgress: progress })
  let bytes = 0
  small.forEach(({ row }, i) => {
    next.setContentBytes(row, hashed.digests.subarray(i * 32, (i + 1) * 32), hashed.sizes[i]!, scanStartMs)
    bytes += hashed.sizes[i]!
  })
  for (const [i, { row, abs }] of large.entries()) {
    const stored = await storeFile({ store: opts.store, path: abs, size: next.size(row), write: opts.write })
    next.setContent(row, stored.content, stored.chunked, stored.size, scanStartMs)
    bytes += stored.size
    progress(small.length + i + 1)
  }
  return bytes
}

/** Build (and store, on a write scan) the tree of every directory the index did not vouch for, children first. */
function buildTrees(opts: ScanOptions, next: NextIndex, walk: Walk): Map<Digest, Tree> {
  const trees = new Map<Digest, Tree>()
  for (let dir = walk.clean.length - 1; dir >= 0; dir--) {
    if (walk.clean[dir]) continue
    const first = next.dirFirst(dir)
    const entries: TreeEntry[] = []
    for (let row = first; row < first + next.dirCount(dir); row++) entries.push(entryOf(next, walk, row))
    const { tree, bytes, digest } = treeObject(entries)
    if (opts.write) opts.store.writeVerifiedSync(digest, bytes)
    next.setDirTree(dir, digest)
    trees.set(digest, tree)
  }
  return trees
}

function entryOf(next: NextIndex, walk: Walk, row: number): TreeEntry {
  const name = next.name(row)
  const kind = next.kind(row)
  switch (kind) {
    case FILE_ROW:
    case EXEC_ROW:
      return fileEntry(name, kind === EXEC_ROW, next.size(row), next.content(row), next.chunked(row))
    case SYMLINK_ROW:
      return symlinkEntry(name, next.target(row))
    default:
      return dirEntry(name, next.dirTree(walk.subdirOfRow.get(row)!))
  }
}
