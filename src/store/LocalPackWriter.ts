import { createHash } from 'node:crypto'
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs'
import type { Digest } from '../objects/digest.js'
import { frameCompressor } from './frameCompressor.js'
import { LocalPacks } from './LocalPacks.js'
import { NO_FRAME_LIMIT, type PackIndex, checkPackIndex, packIndexBytes } from './PackIndex.js'
import { OBJECT_MODE, type Store } from './Store.js'

/** Objects are gathered into frames of about this many bytes before each is compressed (as a registry pack's). */
export const FRAME_BYTES = 1024 * 1024

/**
 * zstd's level for a snapshot's own pack: level 1 compressed the benchmark's text about
 * as well as level 3 (0.44 of its size against 0.43) in about 0.6 of the time, and a cold
 * snapshot waits for it.
 */
const LOCAL_PACK_LEVEL = 1

/** Where new objects go whose digests the caller computed: the store's own files (`Store`), or one pack (`LocalPackWriter`). */
export interface ObjectSink {
  /** Store bytes under their digest; false when the store (or the pack) has them already. */
  writeVerifiedSync(digest: Digest, bytes: Uint8Array): boolean
}

/**
 * Many new objects written as one pack in `objects/packs/`, as a pull keeps a registry's:
 * creating a file per object was most of a cold snapshot's time (the kernel's inode and
 * directory work, about 1 ms an object on a busy 2-core machine). Frames are compressed and
 * appended to a temp file as they fill; `finish` makes the pack durable, moves it into
 * place, then writes its index, the pack's commit, and makes that durable: a crash
 * before leaves a temp file (gc's to remove) or a pack without an index, which no reader
 * looks at. The store reads it later as any kept pack: index checked as it is read,
 * every object hashed against its digest.
 */
export class LocalPackWriter implements ObjectSink {
  private readonly compressor = frameCompressor(LOCAL_PACK_LEVEL)
  private readonly temp: string
  private fd: number | null = null
  private readonly hash = createHash('sha256')
  private readonly frames: Array<[number, number]> = []
  private readonly objects: Array<[Digest, number, number]> = []
  private readonly held = new Set<Digest>()
  private group: Uint8Array[] = []
  private groupBytes = 0
  private offset = 0
  private size = 0
  /**
   * Whether to look for an object's file before packing it: not in a store that seems to
   * have none (a stat each cost a cold snapshot of 10k files 350 ms), where at worst an
   * object is held twice, which every reader, gc and verify take as they come.
   */
  private readonly lookForFiles: boolean

  constructor(private readonly store: Store) {
    this.temp = store.tempPath('pack')
    this.lookForFiles = store.estimatedObjectFiles() > 0
  }

  writeVerifiedSync(digest: Digest, bytes: Uint8Array): boolean {
    if (this.held.has(digest) || this.store.packs.locate(digest, 'read-once') !== undefined) return false
    // an object file of the store's is kept, and made durable with the store's other writes
    if (this.lookForFiles && existsSync(this.store.objectPath(digest))) return this.store.writeVerifiedSync(digest, bytes)
    if (this.groupBytes > 0 && this.groupBytes + bytes.length > FRAME_BYTES) this.writeFrame()
    this.held.add(digest)
    this.objects.push([digest, this.offset, bytes.length])
    this.offset += bytes.length
    this.group.push(bytes)
    this.groupBytes += bytes.length
    return true
  }

  /** How many objects the pack holds so far. */
  get count(): number {
    return this.objects.length
  }

  /** Write the pack and its index (durably) and show it to the store's readers; nothing when it holds no object. */
  finish(): void {
    if (this.group.length > 0) this.writeFrame()
    if (this.fd === null) return
    fsyncSync(this.fd)
    closeSync(this.fd)
    this.fd = null
    const digest: Digest = `sha256:${this.hash.digest('hex')}`
    const index: PackIndex = { kind: 'pack-index', schemaVersion: 1, pack: digest, packSize: this.size, frames: this.frames, objects: this.objects }
    const dir = this.store.packs.dir
    mkdirSync(dir, { recursive: true })
    renameSync(this.temp, LocalPacks.packFile(dir, digest))
    fsyncDir(dir) // the pack's name is durable before the index that commits it can be
    const indexTemp = this.store.tempPath('pack-index')
    writeDurably(indexTemp, packIndexBytes(index))
    renameSync(indexTemp, LocalPacks.indexFile(dir, digest))
    fsyncDir(dir)
    this.store.packs.kept(checkPackIndex(index, `pack index of ${digest}`, NO_FRAME_LIMIT))
  }

  /** Drop what was written (the scan failed): the temp file goes. */
  abort(): void {
    if (this.fd !== null) closeSync(this.fd)
    this.fd = null
    rmSync(this.temp, { force: true })
  }

  private writeFrame(): void {
    const raw = Buffer.concat(this.group)
    const compressed = this.compressor.compress(raw)
    this.fd ??= openSync(this.temp, 'wx', OBJECT_MODE)
    for (let off = 0; off < compressed.length;) off += writeSync(this.fd, compressed, off)
    this.hash.update(compressed)
    this.frames.push([compressed.length, raw.length])
    this.size += compressed.length
    this.group = []
    this.groupBytes = 0
  }
}

function writeDurably(path: string, bytes: Uint8Array): void {
  const fd = openSync(path, 'wx', OBJECT_MODE)
  try {
    for (let off = 0; off < bytes.length;) off += writeSync(fd, bytes, off)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}
