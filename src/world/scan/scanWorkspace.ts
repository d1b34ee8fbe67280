import { createHash } from 'node:crypto'
import { lstatSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { IGNORE_FILES, type IgnoreRules, ignoreRules } from './ignoreRules.js'
import { DIR_ROW, EXEC_ROW, FILE_ROW, SYMLINK_ROW } from './indexFile.js'
import { bytesOfName, fsPath, readdirEntries, readlinkName } from '../../util/fsName.js'
import { NAME_MAX, PATH_MAX } from '../../util/longPath.js'
import { outOfReach, outOfReachError } from './outOfReach.js'
import { hashSmallFiles, helperPays } from './hashFiles.js'
import { LocalPackWriter, type ObjectSink } from '../../store/LocalPackWriter.js'
import { STAT_SLOT, VANISHED, lstat } from './lstatNames.js'
import { StoreDirectory } from './storeDirectory.js'
import { CHUNKING_THRESHOLD, storeFile } from './storeFile.js'
import { type Tree, type TreeEntry, dirEntry, fileEntry, symlinkEntry, treeObject } from '../../objects/Tree.js'
import { joinPath } from '../tree/treeSource.js'
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

/** What a scan found and how much of it had to be read. */
export interface ScanCounts {
  files: number
  bytes: number
  /** Files whose content had to be read (not vouched for by the index). */
  hashedFiles: number
  hashedBytes: number
  /** Directories whose entries had to be listed (not vouched for by the index). */
  listedDirs: number
  /** Paths skipped because they are not files, directories or symlinks (sockets, fifos, devices). */
  skipped: string[]
}

export interface ScanResult extends ScanCounts {
  tree: Digest
  /**
   * The trees this scan built, by id. A directory the index vouched for is not built: its
   * tree is in the store already (only write scans save the index), so
   * `treeSource(store, scan.trees)` reaches every tree of a scan that wrote nothing.
   */
  trees: Map<Digest, Tree>
  /** Every symlink of the tree, by path, with its target. */
  symlinks: Array<{ path: string; target: string }>
  /**
   * After a write scan: make every object written so far durable (with anything the
   * caller added, such as a snapshot object, in the same sync), then save the new index,
   * which may then vouch for them. A no-op for a scan that wrote nothing.
   */
  persist: () => Promise<void>
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
/** The clock a scan's start is read from, which the racy-clean window is measured against (a test places a file inside or outside it). */
export const scanClock = { now: (): number => Date.now() }

export async function scanWorkspace(opts: ScanOptions): Promise<ScanResult> {
  const root = resolve(opts.dir)
  const store = new StoreDirectory(opts.store.root)
  const previous = PreviousIndex.load(opts.store, root) // starts checking the index's files: stopped below, whatever happens
  const scanStartMs = scanClock.now()
  let walked
  try {
    walked = walkWorkspace(opts, root, store, previous, scanStartMs, false)
  } finally {
    previous.doneWalking()
  }
  const sameRules = walked.next.sameRulesAs(previous)
  // Other ignore rules can bring back entries that the lists the index vouched for left out: list everything (asking the index nothing).
  if (walked.walk.reusedLists > 0 && !sameRules) walked = walkWorkspace(opts, root, store, previous, scanStartMs, true)
  const { next, walk, top } = walked
  const { hashedBytes, trees } = await storeObjects(opts, next, walk, scanStartMs)
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
  return {
    tree: next.dirTree(top),
    files,
    bytes,
    hashedFiles: walk.pending.length,
    hashedBytes,
    listedDirs: walk.listedDirs,
    skipped: walk.skipped,
    trees,
    symlinks: symlinksOf(next, walk.clean.length),
    persist,
  }
}

function walkWorkspace(opts: ScanOptions, root: string, store: StoreDirectory, previous: PreviousIndex, scanStartMs: number, listAll: boolean) {
  const next = new NextIndex(root, { rows: previous.c.rows, dirs: previous.c.dirPaths.length })
  const walk = new Walk(store, previous, next, scanStartMs, listAll)
  // What is left out: the ignore rules, and which directory is the store
  const rules = createHash('sha256').update(`${opts.respectGitignore ? 'gitignore' : ''}\0${store.id}\0nested stores left out\0`)
  const onRead = (relDir: string, text: string) => rules.update(`${relDir}\0${text}\0`)
  const top = walk.dir(root, '', ignoreRules({ respectGitignore: opts.respectGitignore ?? false, onRead }))
  next.setRulesKey(rules.digest())
  return { next, walk, top }
}

/**
 * What a directory holds, entry by entry: as listed now, or its rows in the index (which
 * the ignore rules in force filtered when it was saved). Kinds are row kinds (files as
 * FILE_ROW; -1: not a file, directory or symlink); a symlink's target when the index has it.
 */
interface Entries {
  names: string[]
  kinds: number[]
  targets: Array<string | undefined>
  fromIndex: boolean
}

/** A directory's rows in `next`, as one of the two ways of adding them left them. */
interface DirRows {
  first: number
  subdirs: Array<{ row: number; name: string }>
  /** Whether every row added matched the index. */
  clean: boolean
  alwaysList: boolean
  /** The ignore rules inside the directory. */
  rules: IgnoreRules
}

/** A directory more than MAX_TREE_DEPTH deep is refused (exit 5). */
function refuseTooDeep(rel: string): void {
  const why = rel === '' ? null : outOfReach([], rel)
  if (why !== null) throw outOfReachError('snapshot', rel, why)
}

/** An entry of the directory at `abs` whose path is PATH_MAX bytes or more is refused (exit 5): no one lookup reaches it. */
function refuseTooLong(abs: string, rel: string, names: readonly string[]): void {
  if (bytesOfName(abs).length + 1 + NAME_MAX < PATH_MAX) return
  const root = rel === '' ? abs : abs.slice(0, -rel.length - 1)
  for (const name of names) {
    const path = rel ? `${rel}/${name}` : name
    const why = outOfReach([root], path)
    if (why !== null) throw outOfReachError('snapshot', path, why)
  }
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
    private readonly store: StoreDirectory,
    private readonly previous: PreviousIndex,
    private readonly next: NextIndex,
    private readonly scanStartMs: number,
    private readonly listAll: boolean,
  ) {}

  /** Scan one directory (its rows stay contiguous: subdirectories are entered after). `outer`: the parent's ignore rules. */
  dir(abs: string, rel: string, outer: IgnoreRules): number {
    refuseTooDeep(rel)
    // Before listing: a change made while it is listed leaves the next scan a different stat. The root may be a symlink: what it lists is its target's.
    const st = rel === '' ? statSync(fsPath(abs)) : lstatSync(fsPath(abs))
    const before = this.previous.dir(rel)
    const listStillHolds = !this.listAll && before >= 0 && this.previous.listStillHolds(before, st)
    const rows = listStillHolds && this.previous.filesStillHold(before) ? this.reuseRows(abs, rel, outer, before) : this.addRows(abs, rel, outer, before, listStillHolds)
    const count = this.next.rows - rows.first
    let clean = rows.clean && this.previous.rowCount(before) === count
    const flags = dirFlags(st, rows.alwaysList, this.scanStartMs)
    if (before < 0 || !this.previous.dirRecordIs(before, st, flags)) this.dirRecordsChanged = true
    const index = this.next.addDir(rel, rows.first, count, st, flags)
    for (const { row, name } of rows.subdirs) {
      const sub = this.dir(`${abs}/${name}`, rel ? `${rel}/${name}` : name, rows.rules)
      this.subdirOfRow.set(row, sub)
      clean &&= this.clean[sub]!
    }
    this.clean[index] = clean
    if (clean) this.next.copyDirTree(index, this.previous, before)
    return index
  }

  /**
   * The rows of a directory whose list and files are all as the index has them, copied
   * in one go. It holds no rule files (those make a directory listed every time), and
   * its rows passed these very rules, with this very store left out, when they were
   * saved (the rules key covers both: a scan under others is done again, listing
   * everything).
   */
  private reuseRows(abs: string, rel: string, outer: IgnoreRules, before: number): DirRows {
    this.reusedLists++
    const first = this.next.copyRows(this.previous, before)
    const subdirs: DirRows['subdirs'] = []
    for (let row = this.next.nextDirRow(first, this.next.rows); row >= 0; row = this.next.nextDirRow(row + 1, this.next.rows)) {
      subdirs.push({ row, name: this.next.name(row) })
    }
    return { first, subdirs, clean: true, alwaysList: false, rules: outer.enter(abs, rel, () => false) }
  }

  /** Add a directory's rows entry by entry: listed now, or from the index when only its files changed. */
  private addRows(abs: string, rel: string, outer: IgnoreRules, before: number, listStillHolds: boolean): DirRows {
    const listed = listStillHolds ? this.entriesFromIndex(before) : this.list(abs)
    const rules = outer.enter(abs, rel, (file) => listed.names.some((name, i) => name === file && listed.kinds[i] === FILE_ROW))
    // Rows from the index passed these very rules (see reuseRows).
    const { names, kinds, targets, alwaysList } = listed.fromIndex ? { ...listed, alwaysList: false } : this.kept(listed, abs, rel, rules)
    refuseTooLong(abs, rel, names)
    const stats = lstat.lstatNames(
      abs,
      names.filter((_, i) => kinds[i] === FILE_ROW),
    )
    let clean = before >= 0
    let fileSlot = 0
    const first = this.next.rows
    const subdirs: DirRows['subdirs'] = []
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!
      const position = this.next.rows - first
      if (kinds[i] === DIR_ROW) {
        const row = this.next.addRow(name, DIR_ROW)
        subdirs.push({ row, name })
        clean &&= this.previous.kind(this.previous.row(before, name, position)) === DIR_ROW
      } else if (kinds[i] === SYMLINK_ROW) {
        const target = targets[i] ?? readlinkName(`${abs}/${name}`)
        this.next.addRow(name, SYMLINK_ROW, target)
        const old: number = clean ? this.previous.row(before, name, position) : -1
        clean &&= this.previous.kind(old) === SYMLINK_ROW && this.previous.c.targets[old] === target
      } else {
        clean = this.file(abs, name, stats, fileSlot++, before, position) && clean
      }
    }
    return { first, subdirs, clean, alwaysList, rules }
  }

  /**
   * The entries that belong in the tree: not ignored, not the store, files, directories
   * or symlinks (others are reported as skipped). `alwaysList`: the directory holds rule
   * files or skipped entries, which no stat of it can vouch for.
   */
  private kept(listed: Entries, abs: string, rel: string, rules: IgnoreRules): Entries & { alwaysList: boolean } {
    const kept: Entries = { names: [], kinds: [], targets: [], fromIndex: false }
    let alwaysList = false
    listed.names.forEach((name, i) => {
      const kind = listed.kinds[i]!
      if ((IGNORE_FILES as readonly string[]).includes(name)) alwaysList = true
      const isDir = kind === DIR_ROW
      if (rules.ignores(name, isDir) || (isDir && this.store.isAnyStore(`${abs}/${name}`, name))) return
      if (kind < 0) {
        this.skipped.push(rel ? `${rel}/${name}` : name)
        alwaysList = true
        return
      }
      kept.names.push(name)
      kept.kinds.push(kind)
      kept.targets.push(listed.targets[i])
    })
    return { ...kept, alwaysList }
  }

  private list(abs: string): Entries {
    this.listedDirs++
    const listed: Entries = { names: [], kinds: [], targets: [], fromIndex: false }
    for (const { name, dirent: d } of readdirEntries(abs)) {
      listed.names.push(name)
      listed.kinds.push(d.isDirectory() ? DIR_ROW : d.isSymbolicLink() ? SYMLINK_ROW : d.isFile() ? FILE_ROW : -1)
      listed.targets.push(undefined)
    }
    return listed
  }

  /** The entries of a directory that was not changed since the index listed it (a symlink cannot be retargeted in place). */
  private entriesFromIndex(dir: number): Entries {
    this.reusedLists++
    const first = this.previous.c.dirRows[2 * dir]!
    const end = first + this.previous.rowCount(dir)
    const kinds: number[] = []
    for (let row = first; row < end; row++) {
      const kind = this.previous.kind(row)
      kinds.push(kind === EXEC_ROW ? FILE_ROW : kind)
    }
    return { names: this.previous.c.names.slice(first, end), kinds, targets: this.previous.c.targets.slice(first, end).map((t) => t || undefined), fromIndex: true }
  }

  /**
   * Add a file's row from its stat (`slot` of `stats`); its content comes from the
   * previous index when the stat still matches there (true), else it is read later. A
   * file gone since its directory was listed is left out (false: the tree changed).
   */
  private file(dirAbs: string, name: string, stats: Float64Array, slot: number, before: number, position: number): boolean {
    const mode = stats[slot * STAT_SLOT]!
    if (mode === VANISHED) return false
    const kind = (mode & 0o111) !== 0 ? EXEC_ROW : FILE_ROW
    const row = this.next.addRow(name, kind)
    this.next.setStat(row, stats, slot)
    const old = before >= 0 ? this.previous.row(before, name, position) : -1
    if (old >= 0 && this.previous.vouchesFor(old, stats, slot)) {
      this.next.copyContent(row, this.previous, old)
      return true
    }
    this.pending.push({ row, abs: `${dirAbs}/${name}` })
    return false
  }
}

/**
 * A write scan with at least this many small files to store puts them, and its trees, into
 * one pack (`LocalPackWriter`) rather than a file each, unless a second thread hashes them
 * (large files, where hashing is the work, not creating files).
 */
export const PACK_MIN_OBJECTS = 1024

/** Hash the files the index could not vouch for, build the trees, and store what is new (a write scan): in one pack when there are many. */
async function storeObjects(opts: ScanOptions, next: NextIndex, walk: Walk, scanStartMs: number): Promise<{ hashedBytes: number; trees: Map<Digest, Tree> }> {
  const small = walk.pending.filter((p) => next.size(p.row) < CHUNKING_THRESHOLD)
  const smallBytes = small.reduce((n, p) => n + next.size(p.row), 0)
  const pack = opts.write && small.length >= PACK_MIN_OBJECTS && !helperPays(small.length, smallBytes) ? new LocalPackWriter(opts.store) : null
  try {
    const hashedBytes = await hashPending(opts, next, walk.pending, { small, smallBytes, pack }, scanStartMs)
    const trees = buildTrees(opts, next, walk, pack ?? opts.store)
    pack?.finish()
    return { hashedBytes, trees }
  } catch (err) {
    pack?.abort()
    throw err
  }
}

/** Read and store (or only hash) the files the index could not vouch for, the small ones into `pack` if given; returns the bytes read. */
async function hashPending(
  opts: ScanOptions,
  next: NextIndex,
  pending: PendingFile[],
  { small, smallBytes, pack }: { small: PendingFile[]; smallBytes: number; pack: LocalPackWriter | null },
  scanStartMs: number,
): Promise<number> {
  const large = pending.filter((p) => next.size(p.row) >= CHUNKING_THRESHOLD)
  const progress = (done: number) => opts.onProgress?.(done, pending.length)
  const hashed = await hashSmallFiles({
    store: opts.store,
    paths: small.map((p) => p.abs),
    bytes: smallBytes,
    write: opts.write,
    sink: pack ?? undefined,
    onProgress: progress,
  })
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

/** Build (and store into `sink`, on a write scan) the tree of every directory the index did not vouch for, children first. */
function buildTrees(opts: ScanOptions, next: NextIndex, walk: Walk, sink: ObjectSink): Map<Digest, Tree> {
  const trees = new Map<Digest, Tree>()
  for (let dir = walk.clean.length - 1; dir >= 0; dir--) {
    if (walk.clean[dir]) continue
    const first = next.dirFirst(dir)
    const entries: TreeEntry[] = []
    for (let row = first; row < first + next.dirCount(dir); row++) entries.push(entryOf(next, walk, row))
    const { tree, bytes, digest } = treeObject(entries)
    if (opts.write) sink.writeVerifiedSync(digest, bytes)
    next.setDirTree(dir, digest)
    trees.set(digest, tree)
  }
  return trees
}

function symlinksOf(next: NextIndex, dirs: number): ScanResult['symlinks'] {
  const out: ScanResult['symlinks'] = []
  for (let dir = 0; dir < dirs; dir++) {
    const first = next.dirFirst(dir)
    for (let row = first; row < first + next.dirCount(dir); row++) {
      if (next.kind(row) === SYMLINK_ROW) out.push({ path: joinPath(next.dirPath(dir), next.name(row)), target: next.target(row) })
    }
  }
  return out
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
