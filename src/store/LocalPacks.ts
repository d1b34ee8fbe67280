import { closeSync, fstatSync, readSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { DCtx } from 'zstd-napi/binding.js'
import { StoreCorruptError } from '../errors/index.js'
import { readCappedFile } from '../util/readCappedFile.js'
import { requirePackage } from '../util/requirePackage.js'
import { type Digest, digestHex } from '../objects/digest.js'
import { openStoreFileSync } from './readObjectBytes.js'
import { NO_FRAME_LIMIT, type PackedObject, type ReadIndex, parsePackIndex } from './PackIndex.js'

/** A pack the store keeps: its file, its index file, and the index. */
export interface LocalPack {
  digest: Digest
  file: string
  indexFile: string
  index: ReadIndex
}

/** Where a packed object is. */
export interface PackedAt {
  pack: LocalPack
  object: PackedObject
}

/**
 * Decompressed frames kept (of ~1 MiB each): a reader going through a pack in its order
 * decompresses each frame once, and a walk of an image's trees, which a pack holds
 * together in its first frames, decompresses each of those once.
 */
const CACHED_FRAMES = 16

/** A pack index over this is refused: past what one JSON string can hold (V8's 512 MiB), some 3 million objects. */
const MAX_INDEX_BYTES = 256 * 1024 * 1024

/**
 * The packs in `objects/packs/`, a pull's kept whole or a cold snapshot's own
 * (`LocalPackWriter`): `<hex>.pack` holds zstd frames, `<hex>.idx` its index, written
 * after the pack: an index is the pack's commit, so a pack without one is a leftover.
 * Both are read as data from elsewhere (a cloned repository may hold a `.forkpoint/`):
 * an index is checked as it is read, a frame decompressed no further than its index
 * declares (a bomb stops there), every object checked against its digest. The indexes are read at the first lookup, and the directory again when a
 * lookup misses and it has changed since (another process kept or dropped a pack); an
 * index this process read once is not read again (a pack's index never changes).
 */
export class LocalPacks {
  readonly dir: string
  private byDigest = new Map<Digest, PackedAt>()
  private packs: LocalPack[] = []
  private loadedAt: number | null = null
  private frames: Array<{ pack: Digest; frame: number; bytes: Buffer }> = []
  private dctx: DCtx | null = null
  /** Indexes read (or kept) by this process, by pack: an index never changes, and reading one of 100k objects again took 170 ms. */
  private readonly indexes = new Map<Digest, ReadIndex>()

  constructor(dir: string) {
    this.dir = dir
  }

  static packFile(dir: string, digest: Digest): string {
    return join(dir, `${digestHex(digest)}.pack`)
  }

  static indexFile(dir: string, digest: Digest): string {
    return join(dir, `${digestHex(digest)}.idx`)
  }

  /**
   * Where an object is packed, or undefined, by the indexes as far as `lookup` lets it
   * read: `current` reads the directory again when a lookup misses and it changed since,
   * `read-once` reads every index at the first lookup and then never again (for a reader
   * that tries the packs first), `read-already` reads none (for a reader that tries the
   * object's file first until the indexes are read: a process reading only object files, a
   * warm snapshot's, never parses an index, 10-100 ms for one of 10k objects).
   */
  locate(digest: Digest, lookup: 'current' | 'read-once' | 'read-already' = 'current'): PackedAt | undefined {
    if (this.loadedAt === null) {
      if (lookup === 'read-already') return undefined
      this.load()
    }
    const at = this.byDigest.get(digest)
    if (at !== undefined || lookup !== 'current' || !this.changed()) return at
    this.load()
    return this.byDigest.get(digest)
  }

  /** Every pack kept. */
  list(): LocalPack[] {
    this.refresh()
    return [...this.packs]
  }

  /** Digests of packed objects beginning with `hex`. */
  withPrefix(hex: string): Digest[] {
    this.refresh()
    return [...this.byDigest.keys()].filter((d) => digestHex(d).startsWith(hex))
  }

  /** A packed object's bytes as the pack holds them (the store checks them against the digest), or null when no pack holds it. */
  read(digest: Digest): Buffer | null {
    const at = this.locate(digest)
    return at === undefined ? null : this.readAt(at)
  }

  /**
   * An object's bytes, unchecked: from the pack that holds it by the indexes read so far
   * (a lookup is cheaper than the failed open of a file the object does not have), else
   * its file at `path` (`readFile`), else a pack (its indexes read then); null when
   * neither has it.
   */
  bytesOf(digest: Digest, path: string, readFile: (path: string) => Buffer | null): Buffer | null {
    const packed = this.locate(digest, 'read-already')
    return packed ? this.readAt(packed) : (readFile(path) ?? this.read(digest))
  }

  readAt({ pack, object }: PackedAt): Buffer {
    const frame = this.frame(pack, object.frame)
    const start = object.offset - pack.index.frames[object.frame]!.start
    return Buffer.from(frame.subarray(start, start + object.size)) // a copy: the frame is not kept alive by it
  }

  /** `readAt`, with a frame that no longer decompresses as its index says answered `damaged` (for `verify` and walks, which report it). */
  readOrDamaged(at: PackedAt): Buffer | 'damaged' {
    try {
      return this.readAt(at)
    } catch (err) {
      if (err instanceof StoreCorruptError) return 'damaged'
      throw err
    }
  }

  /** Drop a pack: its index first, so it stops being one before its bytes go. */
  remove(pack: LocalPack): void {
    this.indexes.delete(pack.digest)
    rmSync(pack.indexFile, { force: true })
    rmSync(pack.file, { force: true })
    this.load()
  }

  /** A pack this process just kept, with its index as checked when it came (not read back from its file); looked at from the next lookup on (a clone makes none). */
  kept(index: ReadIndex): void {
    this.indexes.set(index.pack, index)
    this.loadedAt = null
  }

  /** Read the packs again if another process (or this one) kept or dropped one since. */
  refresh(): void {
    if (this.loadedAt === null || this.changed()) this.load()
  }

  private changed(): boolean {
    return (statSync(this.dir, { throwIfNoEntry: false })?.mtimeMs ?? 0) !== this.loadedAt
  }

  private load(): void {
    this.loadedAt = statSync(this.dir, { throwIfNoEntry: false })?.mtimeMs ?? 0
    this.byDigest = new Map()
    this.packs = []
    this.frames = []
    const names = this.loadedAt === 0 ? [] : readdirSync(this.dir)
    for (const name of names.filter((n) => /^[0-9a-f]{64}\.idx$/.test(n)).sort()) {
      const digest: Digest = `sha256:${name.slice(0, 64)}`
      const file = LocalPacks.packFile(this.dir, digest)
      if (!names.includes(`${name.slice(0, 64)}.pack`)) continue
      const indexFile = join(this.dir, name)
      const index = this.indexes.get(digest) ?? parsePackIndex(readIndexFile(indexFile), `pack index ${indexFile}`, NO_FRAME_LIMIT)
      this.indexes.set(digest, index)
      if (index.pack !== digest) throw new StoreCorruptError(`pack index ${indexFile} describes pack ${index.pack}, not the one it is named for`, { path: indexFile })
      const pack: LocalPack = { digest, file, indexFile, index }
      this.packs.push(pack)
      for (const object of index.objects) if (!this.byDigest.has(object.digest)) this.byDigest.set(object.digest, { pack, object })
    }
  }

  private frame(pack: LocalPack, n: number): Buffer {
    const cached = this.frames.find((f) => f.pack === pack.digest && f.frame === n)
    if (cached) return cached.bytes
    const compressed = this.readCompressed(pack, n)
    const { size } = pack.index.frames[n]!
    let bytes: Buffer
    try {
      this.dctx ??= new (requirePackage('zstd-napi/binding.js') as typeof import('zstd-napi/binding.js')).DCtx()
      bytes = Buffer.allocUnsafe(size)
      const produced = this.dctx.decompress(bytes, compressed) // fails past `size`: a bomb stops at what the index declares
      if (produced !== size) throw new Error(`it decompresses to ${produced} bytes, not ${size}`)
    } catch (err) {
      throw damaged(pack, n, err)
    }
    this.frames.unshift({ pack: pack.digest, frame: n, bytes })
    this.frames.length = Math.min(this.frames.length, CACHED_FRAMES)
    return bytes
  }

  /**
   * Frame `n` of a pack as the file holds it, compressed.
   * @throws {StoreCorruptError} the file ends before the frame does, its index declares more than a buffer holds, or
   *   the pack is not a regular file of the store (a symlink, a FIFO, a directory) or cannot be read
   */
  readCompressed(pack: LocalPack, n: number): Buffer {
    const { offset, length } = pack.index.frames[n]!
    let compressed: Buffer
    let read: number
    try {
      compressed = Buffer.allocUnsafe(length)
      read = readRegularFileAt(pack.file, compressed, offset)
    } catch (err) {
      throw damaged(pack, n, err)
    }
    if (read !== length) throw damaged(pack, n, new Error(`${read} of ${length} bytes there`))
    return compressed
  }
}

/** Bytes of a regular file at `offset`, into `into`: how many there were. */
function readRegularFileAt(path: string, into: Buffer, offset: number): number {
  const fd = openStoreFileSync(path)
  if (fd === null) throw new Error('the file is missing')
  try {
    if (!fstatSync(fd).isFile()) throw new Error('it is not a regular file')
    return readSync(fd, into, 0, into.length, offset)
  } finally {
    closeSync(fd)
  }
}

/** A pack index's bytes, read as `readRegularFileAt` reads a pack. */
function readIndexFile(path: string): Buffer {
  const refuse = (why: string) => () => new StoreCorruptError(`pack index ${path} ${why} (run 'forkpoint verify')`, { path })
  return readCappedFile(path, MAX_INDEX_BYTES, {
    missing: refuse('cannot be opened as a file'),
    notRegular: refuse('is not a regular file (a symlink, a FIFO or a device): refusing to read it'),
    tooLarge: (size) => refuse(`is ${size} bytes, over the ${MAX_INDEX_BYTES} a pack index may be`)(),
  })
}

function damaged(pack: LocalPack, n: number, err: unknown): StoreCorruptError {
  return new StoreCorruptError(`pack ${pack.file} is damaged at frame ${n}: ${(err as Error).message} (run 'forkpoint verify')`, { path: pack.file }, { cause: err })
}
