import { createHash } from 'node:crypto'
import { closeSync, openSync, writeSync } from 'node:fs'
import type { Digest } from '../store/digest.js'
import { DigestCheck } from '../store/verifiedRead.js'
import type { Store } from '../store/Store.js'
import { canonicalBytes } from '../util/canonicalJson.js'
import { StoreCorruptError } from '../errors/index.js'
import { type Frame, openFrameQueue } from './frameCompressor.js'
import type { BlobRef } from './Descriptor.js'
import type { PackIndex } from '../store/PackIndex.js'

/** Objects are gathered into frames of about this many bytes before each is compressed. */
const FRAME_BYTES = 1024 * 1024

export interface WrittenPack {
  digest: Digest
  size: number
  index: PackIndex
  /** The index's canonical bytes (what travels as the index blob). */
  indexBytes: Buffer
}

/**
 * Write `objects` (read from the store, each verified as it is read) as a pack at
 * `file`: the `structured` ones first, then the rest, each part in digest order, gathered
 * into zstd frames of about FRAME_BYTES (an object larger than that gets a frame of its
 * own), each frame with its checksum. The same objects and level always give the same
 * bytes, so an interrupted push finds the pack it sent already there.
 */
export async function writePack(
  store: Store,
  objects: BlobRef[],
  file: string,
  {
    level = 3,
    onBytes,
    structured = new Set(),
  }: {
    level?: number
    onBytes?: ((n: number) => void) | undefined
    /** Snapshots, trees and the like: a checkout reads every tree before any file, so together they fill a frame or a few, not one frame per tree. */
    structured?: ReadonlySet<Digest>
  } = {},
): Promise<WrittenPack> {
  const byDigest = (a: BlobRef, b: BlobRef) => (a.digest < b.digest ? -1 : a.digest > b.digest ? 1 : 0)
  const sorted = [...objects.filter((o) => structured.has(o.digest)).sort(byDigest), ...objects.filter((o) => !structured.has(o.digest)).sort(byDigest)]
  const hash = createHash('sha256')
  const frames: Array<[number, number]> = []
  const entries: Array<[Digest, number, number]> = []
  const fd = openSync(file, 'w', 0o600)
  const compressing = openFrameQueue(
    level,
    sorted.reduce((n, o) => n + o.size, 0),
  )
  let pending: Buffer[] = []
  let pendingBytes = 0
  let offset = 0
  let size = 0
  const write = (compressed: Frame[]) => {
    for (const { bytes, rawSize } of compressed) {
      writeSync(fd, bytes)
      hash.update(bytes)
      frames.push([bytes.length, rawSize])
      size += bytes.length
      onBytes?.(rawSize)
    }
  }
  const flush = async () => {
    if (pending.length === 0) return
    const raw = Buffer.concat(pending, pendingBytes)
    pending = []
    pendingBytes = 0
    write(await compressing.add(raw))
  }
  try {
    for (const object of sorted) {
      if (pendingBytes > 0 && pendingBytes + object.size > FRAME_BYTES) await flush()
      const bytes = store.readSizedSync(object.digest, object.size)
      // a push does not look locally for what the repository holds; if a pack of it is not reused after all, that object must be here
      if (bytes === null) throw new StoreCorruptError(`object ${object.digest} is missing from the store, needed for the pack; run 'forkpoint verify'`, { digest: object.digest })
      const check = new DigestCheck(object, `(${store.objectPath(object.digest)})`)
      check.update(bytes)
      check.check()
      entries.push([object.digest, offset, object.size])
      pending.push(bytes)
      pendingBytes += bytes.length
      offset += bytes.length
    }
    await flush()
    write(await compressing.finish())
  } finally {
    try {
      closeSync(fd)
    } finally {
      await compressing.close()
    }
  }
  const digest: Digest = `sha256:${hash.digest('hex')}`
  const index: PackIndex = { kind: 'pack-index', schemaVersion: 1, pack: digest, packSize: size, frames, objects: entries }
  return { digest, size, index, indexBytes: canonicalBytes(index) }
}
