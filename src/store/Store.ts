import { existsSync, promises as fs, lstatSync, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { canonicalBytes } from '../util/canonicalJson.js'
import { parseStrictJson } from '../util/strictJson.js'
import { errnoCode } from '../util/fsx.js'
import { markStoreMadeHere } from './madeHere.js'
import { statStoreEntry } from './statStoreEntry.js'
import { readStateOrNull } from './readStateFile.js'
import { readObjectBytes, readObjectBytesSync } from './readObjectBytes.js'
import { tempSibling } from '../util/atomicWrite.js'
import { requirePackage } from '../util/requirePackage.js'
import '../util/disposeSymbols.js'
import { DigestMismatchError, MalformedObjectError, ObjectNotFoundError, StoreCorruptError, StoreNotFoundError } from '../errors/index.js'
import { type Digest, assertDigest, digestHex, sha256 } from '../objects/digest.js'
import { LocalPacks } from './LocalPacks.js'
import { objectPathIn } from './objectPath.js'
import type { StructuredObject } from '../objects/StructuredObject.js'
import { assertStoreOwner } from './storeOwner.js'

/** Up to this many objects written since the last sync are fsynced one by one; more, and the whole file system is synced at once. */
const FSYNC_EACH_LIMIT = 128
/** Below this many, `lacking` stats each object. */
const LIST_MIN = 1024
const SHARDS = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))

/**
 * Objects are read-only by convention, not by mode: 0644 lets a hard link to a blob carry
 * a regular file's mode, which copy-on-write base directories rely on. `verify` catches writes.
 */
export const OBJECT_MODE = 0o644

/**
 * A content-addressed object store on the local file system:
 * `objects/sha256/ab/cdef…` holds each object's exact bytes, uncompressed so checkout can
 * reflink or copy straight from it; `objects/packs/` the packs a pull kept whole
 * (`LocalPacks`), read where an object has no file of its own. Writes are temp file +
 * rename, so a reader never sees a partial object; reads check the digest. Disposing
 * it (`await using`) syncs what it wrote.
 */
export class Store implements AsyncDisposable {
  readonly root: string
  /** `objects/sha256` of the store; object paths are built on it by concatenation (a `join` per object cost a push of 100k objects 135 ms). */
  readonly objectsDir: string
  readonly packs: LocalPacks
  /** Objects written (or found, perhaps just written by another process) since the last `sync()`. */
  private unsynced: string[] = []
  /** Object shard directories found to be real directories (or made) by this process: each is looked at once. */
  private realShards = new Set<string>()
  /** The syncs running, as one promise that never rejects. */
  private syncing: Promise<void> = Promise.resolve()

  /** The objects `sync()` would make durable; a helper thread hands its list to the main thread's store. */
  takeUnsynced(): string[] {
    return this.unsynced.splice(0)
  }

  adoptUnsynced(paths: readonly string[]): void {
    for (const path of paths) this.unsynced.push(path)
  }

  private constructor(root: string) {
    this.root = root
    this.objectsDir = join(root, 'objects', 'sha256')
    this.packs = new LocalPacks(join(root, 'objects', 'packs'))
  }

  /** Create the store's layout (idempotent) and open it. */
  static async init(root: string): Promise<Store> {
    // made here only when made now: a directory that holds anything already (a cloned store without HEAD) is not
    const fresh = isEmptyOrMissing(root)
    await fs.mkdir(root, { recursive: true })
    assertRealDirectories(root) // and makes the directories of INIT_DIRECTORIES
    // All 256 shards up front, so writing an object rarely has to make its directory (assertRealShard).
    await Promise.all(SHARDS.map((shard) => fs.mkdir(join(root, 'objects', 'sha256', shard), { recursive: true })))
    const store = new Store(root)
    if (fresh) await markStoreMadeHere(root)
    if (readStateOrNull(join(root, 'HEAD')) === null) await fs.writeFile(join(root, 'HEAD'), 'ref: refs/heads/main\n')
    return store
  }

  /** Open an existing store; StoreNotFoundError when `root` is not one, UnsafeStoreOwnerError (as root) when another user owns it. */
  static async open(root: string): Promise<Store> {
    const head = statStoreEntry(join(root, 'HEAD'))
    const objects = statStoreEntry(join(root, 'objects', 'sha256'))
    if (!head?.isFile() || !objects?.isDirectory()) {
      throw new StoreNotFoundError(`not a forkpoint store: ${root} (run 'forkpoint init' first)`, { root })
    }
    assertStoreOwner(root)
    assertRealDirectories(root)
    return new Store(root)
  }

  path(...parts: string[]): string {
    return join(this.root, ...parts)
  }

  objectPath(digest: Digest): string {
    return objectPathIn(this.objectsDir, digest)
  }

  /** A fresh temp path inside the store, on the same file system as the objects. */
  tempPath(label: string): string {
    return tempSibling(join(this.root, 'tmp', label))
  }

  /**
   * Whether the store has an object: a lookup in the kept packs, else a stat, synchronously
   * (a pull asks it of thousands, and a trip through the thread pool costs more than a stat).
   */
  async has(digest: Digest): Promise<boolean> {
    return this.packs.locate(digest, 'read-once') !== undefined || existsSync(this.objectPath(digest)) || this.packs.locate(digest) !== undefined
  }

  /**
   * The digests of `digests` the store lacks. Asked about thousands (a clone), one
   * listing of each object directory answers them instead of a stat each (a stat that
   * finds nothing took about 4 µs here: 110 ms of a 10k-file clone); asked about few, or
   * about a fraction of a big store, a stat each is cheaper, so the size of one object
   * directory decides.
   */
  lacking(digests: readonly Digest[]): Set<Digest> {
    const files = digests.length >= LIST_MIN && this.estimatedObjectFiles() < 4 * digests.length ? this.objectFileNames() : null
    const hasFile = (d: Digest) => (files ? files.has(digestHex(d)) : existsSync(this.objectPath(d)))
    this.packs.refresh() // once for all: `has` looks at the packs' directory again at each object it finds nowhere (300 ms of a 100k-file clone)
    if (files?.size === 0 && this.packs.list().length === 0) return new Set(digests) // an empty store (a clone's): no lookups
    return new Set(digests.filter((d) => this.packs.locate(d, 'read-once') === undefined && !hasFile(d)))
  }

  /** The object files' hex names, from one listing of each object directory. */
  private objectFileNames(): Set<string> {
    const names = new Set<string>()
    for (const shard of SHARDS) for (const name of shardNames(this.objectsDir, shard)) names.add(shard + name)
    return names
  }

  /** How many object files the store has, from the first object directory's. */
  estimatedObjectFiles(): number {
    return shardNames(this.objectsDir, SHARDS[0]!).length * SHARDS.length
  }

  /** An object's size in bytes (its file's, or its pack's record), or null when the store lacks it. */
  sizeOf(digest: Digest): number | null {
    return statSync(this.objectPath(digest), { throwIfNoEntry: false })?.size ?? this.packs.locate(digest)?.object.size ?? null
  }

  /** An object's bytes, unchecked (the caller checks them), read knowing its size: `readObjectBytesSync`; null when the store lacks it. */
  readSizedSync(digest: Digest, size: number): Buffer | null {
    return this.bytesOf(digest, (path) => readObjectBytesSync(path, size))
  }

  /**
   * The object's own file, for a use that hands the file on (a hard link, a clone):
   * written out of its pack first when it has none. Throws ObjectNotFoundError when the
   * store lacks it, DigestMismatchError when its packed bytes are corrupt.
   */
  objectFile(digest: Digest): string {
    const path = this.objectPath(digest)
    if (existsSync(path)) return path
    this.writeVerifiedSync(digest, verified(digest, this.packs.read(digest)))
    return path
  }

  /** Store raw bytes; returns their digest. Does not fsync: call `sync()` once at the end. */
  async writeBlob(bytes: Uint8Array): Promise<Digest> {
    const digest = sha256(bytes)
    await this.writeVerified(digest, bytes)
    return digest
  }

  /** Store a structured object in canonical JSON form. */
  async writeObject(object: StructuredObject): Promise<Digest> {
    return this.writeBlob(canonicalBytes(object))
  }

  /**
   * Store bytes whose digest the caller already computed (and is trusted to have
   * computed right: only our own hashing code calls this). Existing objects are kept.
   * Synchronous on purpose: an object write is a few small system calls, and going
   * through the thread pool for each costs more than the calls themselves.
   */
  writeVerifiedSync(digest: Digest, bytes: Uint8Array): boolean {
    const path = this.objectPath(digest)
    if (existsSync(path)) {
      this.unsynced.push(path) // perhaps another writer's, not yet durable
      return false
    }
    this.assertRealShard(dirname(path))
    // Beside its final name: a rename within one directory was cheaper here than one from tmp/.
    const tmp = tempSibling(path)
    writeFileSync(tmp, bytes, { flag: 'wx', mode: OBJECT_MODE })
    this.moveIntoPlaceSync(tmp, path)
    return true
  }

  /**
   * `init` makes every shard directory, but a store a git repository carries has none that was empty (git keeps no
   * empty directory), and one planted as a symlink would have objects written where it leads: a missing shard is
   * made, one that is not a directory refused (StoreCorruptError).
   */
  private assertRealShard(shard: string): void {
    if (this.realShards.has(shard)) return
    const st = lstatSync(shard, { throwIfNoEntry: false })
    if (st === undefined) mkdirSync(shard, { recursive: true })
    else if (!st.isDirectory()) throw new StoreCorruptError(`${shard} is not a directory (a symlink?): refusing to write objects there`, { root: this.root })
    this.realShards.add(shard)
  }

  async writeVerified(digest: Digest, bytes: Uint8Array): Promise<boolean> {
    return this.writeVerifiedSync(digest, bytes)
  }

  /** Move a finished temp file to its object path. */
  async moveIntoPlace(tmp: string, path: string): Promise<void> {
    this.moveIntoPlaceSync(tmp, path)
  }

  private moveIntoPlaceSync(tmp: string, path: string): void {
    this.assertRealShard(dirname(path))
    renameSync(tmp, path)
    this.unsynced.push(path)
  }

  /** Read an object's bytes and check them against the digest. */
  async readBlob(digest: Digest): Promise<Buffer> {
    assertDigest(digest)
    const packed = this.packs.locate(digest, 'read-already') // as `bytesOf`, the file read asynchronously: a blob may be large
    return verified(digest, packed ? this.packs.readAt(packed) : ((await readObjectBytes(this.objectPath(digest))) ?? this.packs.read(digest)))
  }

  /** Read and parse a structured object (small: read synchronously); `kind` checks what the caller expects. */
  async readObject<T extends StructuredObject = StructuredObject>(digest: Digest, kind?: T['kind']): Promise<T> {
    assertDigest(digest)
    return parseStructured<T>(verified(digest, this.bytesOf(digest, readObjectBytesSync)), digest, kind)
  }

  /** An object's bytes, unchecked (`LocalPacks.bytesOf`); null when the store lacks it. */
  private bytesOf(digest: Digest, readFile: (path: string) => Buffer | null): Buffer | null {
    return this.packs.bytesOf(digest, this.objectPath(digest), readFile)
  }

  /**
   * Make every object written so far durable: a few are fsynced one by one (with their
   * directories, for the renames); many, with one syncfs(2) of the store's file system,
   * cheaper than an fsync per object but a flush of everything else dirty there too.
   */
  async sync(): Promise<void> {
    // an earlier sync still running may hold objects of this caller's: it must end before this one returns
    const earlier = this.syncing
    const mine = this.flush(this.takeUnsynced())
    this.syncing = Promise.allSettled([earlier, mine]).then(() => undefined)
    await Promise.all([earlier, mine])
  }

  private async flush(written: string[]): Promise<void> {
    if (written.length > FSYNC_EACH_LIMIT) {
      const { execFile } = requirePackage('node:child_process') as typeof import('node:child_process')
      await promisify(execFile)('sync', ['-f', join(this.root, 'objects')])
      return
    }
    // all at once: the file system's journal commits concurrent fsyncs together
    const results = await Promise.allSettled([...written, ...new Set(written.map((p) => dirname(p)))].map(fsyncPath))
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failed) throw failed.reason
  }

  /** Make what was written through it durable: `sync()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.sync()
  }
}

async function fsyncPath(path: string): Promise<void> {
  const handle = await fs.open(path, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** A structured object from its bytes, parsed strictly (`parseStrictJson`): MalformedObjectError (exit 5) for anything else, or another `kind` than asked. */
export function parseStructured<T extends StructuredObject>(bytes: Buffer, digest: Digest, kind?: string): T {
  let parsed: unknown
  try {
    parsed = parseStrictJson(bytes)
  } catch (err) {
    throw new MalformedObjectError(`object ${digest} is not a valid structured object: ${(err as Error).message}`, { digest })
  }
  if (typeof parsed !== 'object' || parsed === null || typeof (parsed as { kind?: unknown }).kind !== 'string') {
    throw new MalformedObjectError(`object ${digest} has no kind`, { digest })
  }
  const actual = (parsed as { kind: string }).kind
  if (kind !== undefined && actual !== kind) {
    throw new MalformedObjectError(`object ${digest} is a ${actual}, not a ${kind}`, { digest, expected: kind, actual })
  }
  return parsed as T
}

/** An object's bytes as read, checked against its digest. */
export function verified(digest: Digest, bytes: Buffer | null): Buffer {
  if (bytes === null) throw new ObjectNotFoundError(`object ${digest} is not in the store`, { digest })
  const actual = sha256(bytes)
  if (actual !== digest) throw corruptObject(digest, actual)
  return bytes
}

/** The error for an object whose bytes no longer hash to its name. */
export function corruptObject(digest: Digest, actual: Digest): DigestMismatchError {
  return new DigestMismatchError(`object ${digest} is corrupt: its bytes hash to ${actual} (run 'forkpoint verify')`, { digest })
}

/** The names in one object directory (none when it is missing). */
function shardNames(objectsDir: string, shard: string): string[] {
  try {
    return readdirSync(join(objectsDir, shard))
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return []
    throw err
  }
}

/**
 * The store's own directories that every command reads or writes below. Each must be a directory, never a symlink:
 * a cloned repository's `.forkpoint/refs/heads` linked to `/etc` would have a ref read from there (and echoed in the
 * error), and `logs` linked elsewhere would have reflogs written there.
 */
const STORE_DIRECTORIES = [
  'refs',
  'refs/heads',
  'refs/tags',
  'logs',
  'logs/refs',
  'logs/refs/heads',
  'logs/refs/tags',
  'objects',
  'objects/sha256',
  'objects/packs',
  'tmp',
  'locks',
  'locks/writers',
  'branches',
  'branches/live',
  'branches/bases',
  'branches/locks',
  'branches/generations',
  'branches/probes',
  'machines',
  'claude',
  'sandboxes',
  'ca',
]

function isEmptyOrMissing(dir: string): boolean {
  try {
    return readdirSync(dir).length === 0
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return true
    throw err
  }
}

function assertRealDirectories(root: string): void {
  for (const dir of STORE_DIRECTORIES) {
    const st = lstatSync(join(root, dir), { throwIfNoEntry: false })
    if (st && !st.isDirectory()) throw new StoreCorruptError(`${join(root, dir)} is not a directory (a symlink?): refusing the store`, { root })
    if (!st && INIT_DIRECTORIES.includes(dir)) makeMissing(join(root, dir))
  }
}

/** The directories `init` makes, which a store a git repository carries lacks when they were empty (git keeps no empty directory). */
const INIT_DIRECTORIES = ['refs/heads', 'refs/tags', 'logs', 'tmp', 'locks']

/** Make a directory the store lacks; where the store cannot be written (a read-only mount) the command that writes there says so. */
function makeMissing(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true })
  } catch (err) {
    if (!['EROFS', 'EACCES', 'EPERM', 'EEXIST'].includes(errnoCode(err) ?? '')) throw err
  }
}
