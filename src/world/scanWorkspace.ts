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

/** What a walk needs of the stat cache (a partial scan of a few paths does without one). */
type ContentCache = Pick<StatCache, 'lookup' | 'knowsTree' | 'rememberTree'>

const NO_CACHE: ContentCache = { lookup: () => null, knowsTree: () => false, rememberTree: () => undefined }

type Kind = { isDirectory(): boolean; isSymbolicLink(): boolean; isFile(): boolean }

class Walk {
  readonly all: FileSlot[] = []
  readonly pending: FileSlot[] = []
  readonly skipped: string[] = []

  constructor(
    private readonly storeDir: string,
    private readonly cache: ContentCache,
  ) {}

  /** Scan one directory; `outer` are the rules of its parent (this directory's own files are added here). */
  dir(abs: string, rel: string, outer: IgnoreRules): DirNode {
    const node: DirNode = { files: [], dirs: [], symlinks: [] }
    const dirents = readdirSync(abs, { withFileTypes: true })
    const rules = outer.enter(abs, rel, (file) => dirents.some((d) => d.name === file && d.isFile()))
    for (const dirent of dirents) this.child(node, abs, rel, dirent.name, dirent, rules)
    return node
  }

  /** Add one entry of the directory `abs` to its node, unless ignored (`rules` are the directory's own). */
  child(node: DirNode, abs: string, rel: string, name: string, kind: Kind, rules: IgnoreRules): void {
    const childAbs = `${abs}/${name}`
    const childRel = rel ? `${rel}/${name}` : name
    if (kind.isDirectory()) {
      if (childAbs === this.storeDir || rules.ignores(name, true)) return
      node.dirs.push({ name, node: this.dir(childAbs, childRel, rules) })
    } else if (kind.isSymbolicLink()) {
      if (rules.ignores(name, false)) return
      const target = readlinkSync(childAbs)
      node.symlinks.push({ name, type: 'symlink', mode: SYMLINK_MODE, size: Buffer.byteLength(target), target })
    } else if (kind.isFile()) {
      if (rules.ignores(name, false)) return
      node.files.push(this.file(name, childAbs, childRel))
    } else if (!rules.ignores(name, false)) {
      this.skipped.push(childRel)
    }
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

function fileEntry(f: FileSlot): TreeEntry {
  const mode = f.executable ? EXEC_MODE : FILE_MODE
  const size = f.st.size
  return f.chunked ? { name: f.name, type: 'file', mode, size, chunks: f.content! } : { name: f.name, type: 'file', mode, size, blob: f.content! }
}

/** The entries of a node, its subdirectories' trees built (and stored when `write`) first. */
async function nodeEntries(opts: ScanOptions, cache: ContentCache, node: DirNode, trees: Map<Digest, Tree>): Promise<TreeEntry[]> {
  const entries: TreeEntry[] = [...node.symlinks, ...node.files.map(fileEntry)]
  for (const d of node.dirs) entries.push({ name: d.name, type: 'dir', mode: DIR_MODE, size: 0, tree: await buildTree(opts, cache, d.node, trees) })
  return entries
}

async function buildTree(opts: ScanOptions, cache: ContentCache, node: DirNode, trees: Map<Digest, Tree>): Promise<Digest> {
  const entries = await nodeEntries(opts, cache, node, trees)
  const tree: Tree = makeTree(entries)
  const bytes = treeBytes(tree)
  const digest = sha256(bytes)
  if (opts.write && !cache.knowsTree(digest)) await opts.store.writeVerified(digest, bytes)
  cache.rememberTree(digest)
  trees.set(digest, tree)
  return digest
}

/**
 * Scan only some paths of a workspace (relative, '/'-separated), as a full scan would
 * see them: ignore rules of every directory above applied, the store left out, files
 * hashed (and stored when `write`) without the stat cache. Each path maps to its tree
 * entry, or to null when it is absent, ignored or not a file, directory or symlink.
 */
export async function scanPaths(opts: ScanOptions & { paths: string[] }): Promise<Map<string, TreeEntry | null>> {
  const root = resolve(opts.dir)
  const walk = new Walk(resolve(opts.store.root), NO_CACHE)
  const nodes = new Map<string, DirNode | null>()
  for (const rel of opts.paths) {
    const cut = rel.lastIndexOf('/')
    const [parentRel, name] = cut < 0 ? ['', rel] : [rel.slice(0, cut), rel.slice(cut + 1)]
    const rules = rulesInside(root, parentRel, resolve(opts.store.root), opts.respectGitignore ?? false)
    const st = rules && lstatSync(`${root}/${rel}`, { throwIfNoEntry: false })
    if (!rules || !st) {
      nodes.set(rel, null)
      continue
    }
    const node: DirNode = { files: [], dirs: [], symlinks: [] }
    walk.child(node, parentRel ? `${root}/${parentRel}` : root, parentRel, name, st, rules)
    nodes.set(rel, node)
  }
  await hashPending(opts, walk.pending)
  const out = new Map<string, TreeEntry | null>()
  for (const [rel, node] of nodes) out.set(rel, node ? ((await nodeEntries(opts, NO_CACHE, node, new Map()))[0] ?? null) : null)
  return out
}

/** The rules in force inside directory `rel` (entering every directory from the root), or null when it is ignored, left out or gone. */
function rulesInside(root: string, rel: string, storeDir: string, respectGitignore: boolean): IgnoreRules | null {
  const isFile = (abs: string) => (file: string) => lstatSync(`${abs}/${file}`, { throwIfNoEntry: false })?.isFile() ?? false
  let rules = ignoreRules({ respectGitignore }).enter(root, '', isFile(root))
  let abs = root
  let here = ''
  for (const part of rel === '' ? [] : rel.split('/')) {
    if (rules.ignores(part, true)) return null
    abs = `${abs}/${part}`
    here = here ? `${here}/${part}` : part
    if (abs === storeDir || !lstatSync(abs, { throwIfNoEntry: false })?.isDirectory()) return null
    rules = rules.enter(abs, here, isFile(abs))
  }
  return rules
}
