import { type Stats, lstatSync, readdirSync, readlinkSync } from 'node:fs'
import { resolve } from 'node:path'
import { type Digest, sha256 } from '../store/digest.js'
import type { Store } from '../store/Store.js'
import { type IgnoreRules, ignoreRules } from './ignoreRules.js'
import { StatCache } from './statCache.js'
import { storeFile } from './storeFile.js'
import { DIR_MODE, EXEC_MODE, FILE_MODE, SYMLINK_MODE, type Tree, type TreeEntry, makeTree, treeBytes } from './Tree.js'

export interface ScanOptions {
  store: Store
  /** The workspace root. */
  dir: string
  /** Store new blobs and trees (a snapshot), or only hash them (status). */
  write: boolean
  respectGitignore?: boolean
  /** Files hashed at once; both cores stay busy between reading and hashing. */
  concurrency?: number
  onProgress?: (done: number, total: number) => void
}

export interface ScanResult {
  tree: Digest
  files: number
  bytes: number
  /** Files whose content had to be read (not vouched for by the stat cache). */
  hashedFiles: number
  hashedBytes: number
  /** Paths skipped because they are not files, directories or symlinks (sockets, fifos, devices). */
  skipped: string[]
  /** Every tree of this scan by id, so callers can diff a scan that wrote nothing. */
  trees: Map<Digest, Tree>
}

interface FileSlot {
  name: string
  rel: string
  abs: string
  st: Stats
  executable: boolean
  content?: Digest
  chunked?: boolean
}

interface DirNode {
  files: FileSlot[]
  dirs: Array<{ name: string; node: DirNode }>
  symlinks: TreeEntry[]
}

/**
 * Scan a workspace into Merkle trees: regular files with their executable bit, symlinks
 * as their target (never followed), empty directories kept, ignore rules applied, the
 * store's own directory always left out. Unchanged files are vouched for by the stat
 * cache and not read.
 */
export async function scanWorkspace(opts: ScanOptions): Promise<ScanResult> {
  const root = resolve(opts.dir)
  const cache = StatCache.load(opts.store, root)
  const scanStartMs = Date.now()
  const walk = new Walk(resolve(opts.store.root), cache)
  const top = walk.dir(root, '', ignoreRules({ respectGitignore: opts.respectGitignore ?? false }))
  await hashPending(opts, walk.pending)
  for (const slot of walk.all) cache.remember(slot.rel, slot.st, slot.executable, slot.content!, slot.chunked!, scanStartMs)
  const trees = new Map<Digest, Tree>()
  const tree = await buildTree(opts, cache, top, trees)
  if (opts.write) await cache.save()
  return {
    tree,
    files: walk.all.length,
    bytes: walk.all.reduce((n, s) => n + s.st.size, 0),
    hashedFiles: walk.pending.length,
    hashedBytes: walk.pending.reduce((n, s) => n + s.st.size, 0),
    skipped: walk.skipped,
    trees,
  }
}

class Walk {
  readonly all: FileSlot[] = []
  readonly pending: FileSlot[] = []
  readonly skipped: string[] = []

  constructor(
    private readonly storeDir: string,
    private readonly cache: StatCache,
  ) {}

  /** Scan one directory; `outer` are the rules of its parent (this directory's own files are added here). */
  dir(abs: string, rel: string, outer: IgnoreRules): DirNode {
    const node: DirNode = { files: [], dirs: [], symlinks: [] }
    const dirents = readdirSync(abs, { withFileTypes: true })
    const rules = outer.enter(abs, rel, (file) => dirents.some((d) => d.name === file && d.isFile()))
    for (const dirent of dirents) {
      const name = dirent.name
      const childAbs = `${abs}/${name}`
      const childRel = rel ? `${rel}/${name}` : name
      if (dirent.isDirectory()) {
        if (childAbs === this.storeDir || rules.ignores(name, true)) continue
        node.dirs.push({ name, node: this.dir(childAbs, childRel, rules) })
      } else if (dirent.isSymbolicLink()) {
        if (rules.ignores(name, false)) continue
        const target = readlinkSync(childAbs)
        node.symlinks.push({ name, type: 'symlink', mode: SYMLINK_MODE, size: Buffer.byteLength(target), target })
      } else if (dirent.isFile()) {
        if (rules.ignores(name, false)) continue
        node.files.push(this.file(name, childAbs, childRel))
      } else if (!rules.ignores(name, false)) {
        this.skipped.push(childRel)
      }
    }
    return node
  }

  private file(name: string, abs: string, rel: string): FileSlot {
    const st = lstatSync(abs)
    const executable = (st.mode & 0o111) !== 0
    const slot: FileSlot = { name, rel, abs, st, executable }
    const hit = this.cache.lookup(rel, st, executable)
    if (hit) {
      slot.content = hit.content
      slot.chunked = hit.chunked
    } else {
      this.pending.push(slot)
    }
    this.all.push(slot)
    return slot
  }
}

async function hashPending(opts: ScanOptions, pending: FileSlot[]): Promise<void> {
  let next = 0
  let done = 0
  const worker = async (): Promise<void> => {
    while (next < pending.length) {
      const slot = pending[next++]!
      const stored = await storeFile({ store: opts.store, path: slot.abs, size: slot.st.size, write: opts.write })
      slot.content = stored.content
      slot.chunked = stored.chunked
      opts.onProgress?.(++done, pending.length)
    }
  }
  await Promise.all(Array.from({ length: Math.min(opts.concurrency ?? 16, pending.length) }, worker))
}

async function buildTree(opts: ScanOptions, cache: StatCache, node: DirNode, trees: Map<Digest, Tree>): Promise<Digest> {
  const entries: TreeEntry[] = [...node.symlinks]
  for (const f of node.files) {
    const mode = f.executable ? EXEC_MODE : FILE_MODE
    const size = f.st.size
    entries.push(f.chunked ? { name: f.name, type: 'file', mode, size, chunks: f.content! } : { name: f.name, type: 'file', mode, size, blob: f.content! })
  }
  for (const d of node.dirs) entries.push({ name: d.name, type: 'dir', mode: DIR_MODE, size: 0, tree: await buildTree(opts, cache, d.node, trees) })
  const tree: Tree = makeTree(entries)
  const bytes = treeBytes(tree)
  const digest = sha256(bytes)
  if (opts.write && !cache.knowsTree(digest)) await opts.store.writeVerified(digest, bytes)
  cache.rememberTree(digest)
  trees.set(digest, tree)
  return digest
}
