import { constants, existsSync, linkSync, mkdirSync, promises as fs, symlinkSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { DigestMismatchError, ObjectNotFoundError, StoreCorruptError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import { assertObjectIntact } from '../../store/objectIntact.js'
import { OBJECT_MODE, type Store } from '../../store/Store.js'
import { forEachLimit } from '../../util/forEachLimit.js'
import { errnoCode, writeNewFile } from '../../util/fsx.js'
import type { Limits } from '../../util/limits.js'
import { timeSlices } from '../../util/timeSlices.js'
import { fsPath } from '../../util/fsName.js'
import { inPackOrder } from './inPackOrder.js'
import { readChunks } from '../tree/readObjects.js'
import { admitTree } from './admitTree.js'
import { quotePath } from '../diff/quotePath.js'
import { FILE_MODE, type FileEntry, type Tree, contentDigest } from '../../objects/Tree.js'
import { type TreeSource, joinPath } from '../tree/treeSource.js'

/**
 * How file bytes get from the store to the target: `reflink` clones (no data copied;
 * btrfs, XFS, APFS), `copy` reads and writes them, `hardlink` links the object itself
 * (read-only uses such as base directories; only for non-executable files, whose mode the
 * object file carries). Each verifies the object's digest first (writeFileEntry).
 */
export type CopyMethod = 'reflink' | 'copy' | 'hardlink'

export interface MaterializeOptions {
  store: Store
  source: TreeSource
  tree: Digest
  /** A directory that must not exist yet; it is created. */
  into: string
  method?: CopyMethod | 'auto'
  /** Allow symlinks whose target leaves the tree (absolute, or climbing above the root). */
  allowExternalSymlinks?: boolean
  /** The budget the checkout keeps to (default: environment, then DEFAULT_LIMITS). */
  limits?: Limits
  concurrency?: number
  /**
   * Hash each object before it is linked or cloned (the default). Off only for a branch's
   * base directory, which must stay O(links) to build: see docs/world-integrity.md.
   */
  verify?: boolean
  onProgress?: (done: number, total: number) => void
}

export interface MaterializeResult {
  files: number
  bytes: number
  method: CopyMethod
}

/** A file to write: where, what, and its path in the tree (for messages). */
export interface FileWrite {
  abs: string
  entry: FileEntry
  rel: string
}

/** Write a tree out as a new directory (after `admitTree` accepts it all): directories, symlinks, then files. */
export async function materializeTree(opts: MaterializeOptions): Promise<MaterializeResult> {
  const method = opts.method === undefined || opts.method === 'auto' ? await probeCopyMethod(opts.store, dirname(opts.into)) : opts.method
  const source = memoized(opts.source) // admitTree and layOut read each tree once
  const chunks = (digest: Digest) => readChunks(opts.store, digest)
  await admitTree({ source, chunks, tree: opts.tree, root: opts.into, allowExternalSymlinks: opts.allowExternalSymlinks ?? false, limits: opts.limits })
  await fs.mkdir(fsPath(opts.into))
  const files: FileWrite[] = []
  await layOut(source, opts.tree, opts.into, '', files)
  await writeFiles(opts.store, files, method, opts)
  return { files: files.length, bytes: files.reduce((n, f) => n + f.entry.size, 0), method }
}

function memoized(source: TreeSource): TreeSource {
  const trees = new Map<Digest, Promise<Tree>>()
  return (digest) => {
    let tree = trees.get(digest)
    if (!tree) trees.set(digest, (tree = source(digest)))
    return tree
  }
}

/**
 * Make `tree`'s directories and symlinks in `into` (which exists), and add its files to
 * `files`, named `prefix/...` in messages. Returns how many entries it laid out, all levels.
 */
export async function layOut(source: TreeSource, tree: Digest, into: string, prefix: string, files: FileWrite[]): Promise<number> {
  let entries = 0
  const dir = join(into, '/') // once a directory: a tree's names are single safe components, and a join per file cost a 100k-file clone about 80 ms and its garbage
  for (const entry of (await source(tree)).entries) {
    entries++
    const abs = dir + entry.name
    const rel = joinPath(prefix, entry.name)
    // directories and symlinks one after another, synchronously: each takes microseconds, a trip through the thread pool more
    if (entry.type === 'dir') {
      mkdirSync(fsPath(abs))
      entries += await layOut(source, entry.tree, abs, rel, files)
    } else if (entry.type === 'symlink') {
      symlinkSync(fsPath(entry.target), fsPath(abs))
    } else {
      files.push({ abs, entry, rel })
    }
  }
  return entries
}

/**
 * Write files whose paths do not exist yet, in pack order, 32 at a time. The first
 * failure stops new writes; the call returns only once those under way are done, so a
 * caller's cleanup is final.
 */
export async function writeFiles(
  store: Store,
  files: FileWrite[],
  method: CopyMethod,
  opts: Pick<MaterializeOptions, 'verify' | 'concurrency' | 'onProgress'> = {},
): Promise<void> {
  let done = 0
  const progress = () => opts.onProgress?.(++done, files.length)
  const rest = method === 'hardlink' && opts.verify === false ? await linkUnverified(store, files, progress) : files
  await forEachLimit(
    inPackOrder(store, rest, (file) => file.entry),
    opts.concurrency ?? 32,
    async (file) => {
      await writeFileEntry(store, file.abs, file.entry, method, file.rel, opts.verify ?? true)
      progress()
    },
  )
}

/**
 * Link the plain files of `files` (a base directory's: thousands, unverified) synchronously, a
 * slice at a time, as `cp -al` does: a link takes microseconds, a trip through Node's
 * thread pool more. Returns the files left for the general way: other modes, chunked
 * files, and any link that failed (which the general way retries, and reports as it does).
 */
async function linkUnverified(store: Store, files: FileWrite[], progress: () => void): Promise<FileWrite[]> {
  const rest: FileWrite[] = []
  const pause = timeSlices()
  for (const file of files) {
    if ('blob' in file.entry && file.entry.mode === FILE_MODE && linkedOrNot(store.objectPath(file.entry.blob), file.abs)) progress()
    else rest.push(file)
    const due = pause()
    if (due) await due
  }
  return rest
}

/** `linked`, with any failure a false: the general way tries the job again and reports what fails. */
function linkedOrNot(object: string, abs: string): boolean {
  try {
    return linked(object, abs)
  } catch {
    return false
  }
}

/** Hard-link an object (synchronously: one system call); false when it already has as many links as the file system allows (ext4: 65000). */
function linked(object: string, abs: string): boolean {
  try {
    linkSync(object, fsPath(abs))
    return true
  } catch (err) {
    if (errnoCode(err) === 'EMLINK') return false
    throw err
  }
}

/**
 * Write one file entry at `abs` (which must not exist) with its exact mode. The object's
 * bytes are verified on the way (DESIGN.md): hashed before a link or a clone hands the
 * file itself on, hashed as they are read for a copy. A corrupt object writes nothing and
 * throws DigestMismatchError (exit 5) naming it and `rel`, the path it was meant for.
 * `verify` false links or clones unhashed (a base directory's links; a copy always checks).
 */
export async function writeFileEntry(store: Store, abs: string, entry: FileEntry, method: CopyMethod, rel = abs, verify = true): Promise<void> {
  try {
    if ('chunks' in entry) return await writeChunked(store, abs, entry)
    await writeBlob(store, abs, entry, method, verify)
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') await fs.rm(fsPath(abs), { force: true })
    const digest = contentDigest(entry)
    if (err instanceof DigestMismatchError)
      throw new DigestMismatchError(`refusing to write ${quotePath(rel)}: ${err.message}`, { digest: err.data['digest'] ?? digest, path: rel })
    // A tree naming an object the store lacks is a damaged store (exit 5), not a bug.
    if ((errnoCode(err) === 'ENOENT' || err instanceof ObjectNotFoundError) && !(await store.has(digest))) {
      throw new StoreCorruptError(`object ${digest} is missing from the store, needed for ${quotePath(rel)} (run 'forkpoint verify')`, { digest, path: rel })
    }
    throw err
  }
}

async function writeBlob(store: Store, abs: string, entry: Extract<FileEntry, { blob: Digest }>, method: CopyMethod, verify: boolean): Promise<void> {
  // a packed object has no file to clone: its bytes are written
  if (method === 'copy' || (method === 'reflink' && !existsSync(store.objectPath(entry.blob)))) {
    return writeNewFile(fsPath(abs), await store.readBlob(entry.blob), entry.mode)
  }
  const object = store.objectFile(entry.blob) // a packed one is given a file of its own
  if (verify) await assertObjectIntact(store, entry.blob)
  if (method === 'hardlink' && entry.mode === FILE_MODE && linked(object, abs)) return
  const clone = method === 'reflink' ? constants.COPYFILE_FICLONE_FORCE : 0
  await fs.copyFile(object, fsPath(abs), clone | constants.COPYFILE_EXCL)
  // the copy carries the object file's mode (0644); only other modes need a change
  if (entry.mode !== OBJECT_MODE) await fs.chmod(fsPath(abs), entry.mode)
}

async function writeChunked(store: Store, abs: string, entry: Extract<FileEntry, { chunks: Digest }>): Promise<void> {
  const chunks = await readChunks(store, entry.chunks)
  const handle = await fs.open(fsPath(abs), 'wx', entry.mode)
  try {
    for (const part of chunks.chunks) await handle.write(await store.readBlob(part.blob))
  } finally {
    await handle.close()
  }
  await fs.chmod(fsPath(abs), entry.mode)
  if (chunks.size !== entry.size) throw new DigestMismatchError(`chunked file ${abs}: size ${chunks.size} does not match its tree entry (${entry.size})`)
}

const probed = new Map<string, CopyMethod>()

/** Can the store's objects be cloned into `targetDir`? Probed once per pair per process. */
export async function probeCopyMethod(store: Store, targetDir: string): Promise<CopyMethod> {
  const key = `${store.root}\0${targetDir}`
  const known = probed.get(key)
  if (known) return known
  const src = store.tempPath('probe-src')
  const dst = join(targetDir, `.forkpoint-probe-${process.pid}-${Date.now()}`)
  let method: CopyMethod
  try {
    await fs.writeFile(src, 'probe')
    await fs.copyFile(src, dst, constants.COPYFILE_FICLONE_FORCE)
    method = 'reflink'
  } catch {
    method = 'copy'
  } finally {
    await fs.rm(src, { force: true })
    await fs.rm(dst, { force: true })
  }
  probed.set(key, method)
  return method
}
