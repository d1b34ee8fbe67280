import { createHash } from 'node:crypto'
import { closeSync, openSync, writeSync } from 'node:fs'
import type { Digest } from '../store/digest.js'
import type { Store } from '../store/Store.js'
import { type Frame, openFrameQueue } from './frameBuilder.js'
import type { BlobRef } from './Descriptor.js'
import { type PackIndex, packIndexBytes } from '../store/PackIndex.js'

/** Objects are gathered into frames of about this many bytes before each is compressed. */
const FRAME_BYTES = 1024 * 1024

export interface WrittenPack {
  digest: Digest
  size: number
  index: PackIndex
  /** The index's canonical bytes (what travels as the index blob). */
  indexBytes: Buffer
  /** The threads that built it. */
  threads: 1 | 2
}

/**
 * Write `objects` (read from the store, each verified as it is read) as a pack at
 * `file`: the `structured` ones first, in digest order, then the rest in the order given
 * (an image's walk meets a directory's files together: a checkout, which writes in pack
 * order, then creates one directory's files after another), gathered into zstd frames of
 * about FRAME_BYTES (an object larger than that gets a frame of its own), each frame with
 * its checksum. The same objects in the same order and level always give the same bytes,
 * so an interrupted push, walking the same image again, finds the pack it sent already there.
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
  const sorted = [...objects.filter((o) => structured.has(o.digest)).sort(byDigest), ...objects.filter((o) => !structured.has(o.digest))]
  const hash = createHash('sha256')
  const frames: Array<[number, number]> = []
  const entries: Array<[Digest, number, number]> = []
  let offset = 0
  for (const o of sorted) {
    entries.push([o.digest, offset, o.size])
    offset += o.size
  }
  const fd = openSync(file, 'w', 0o600)
  const building = openFrameQueue({
    level,
    totalBytes: offset,
    objects: sorted.length,
    reader: { read: (o) => store.readSizedSync(o.digest, o.size), where: (o) => store.objectPath(o.digest) },
    objectsDir: store.objectsDir,
  })
  let size = 0
  const write = (built: Frame[]) => {
    for (const { bytes, rawSize } of built) {
      writeSync(fd, bytes)
      hash.update(bytes)
      frames.push([bytes.length, rawSize])
      size += bytes.length
      onBytes?.(rawSize)
    }
  }
  try {
    for (const frame of frameGroups(sorted)) write(await building.add(frame))
    write(await building.finish())
  } finally {
    try {
      closeSync(fd)
    } finally {
      await building.close()
    }
  }
  const digest: Digest = `sha256:${hash.digest('hex')}`
  const index: PackIndex = { kind: 'pack-index', schemaVersion: 1, pack: digest, packSize: size, frames, objects: entries }
  return { digest, size, index, indexBytes: packIndexBytes(index), threads: building.threads }
}

/** The objects in frames of about FRAME_BYTES, in order (an object larger than that gets a frame of its own). */
function frameGroups(objects: BlobRef[]): BlobRef[][] {
  const groups: BlobRef[][] = []
  let current: BlobRef[] = []
  let bytes = 0
  for (const object of objects) {
    if (bytes > 0 && bytes + object.size > FRAME_BYTES) {
      groups.push(current)
      ;[current, bytes] = [[], 0]
    }
    current.push(object)
    bytes += object.size
  }
  if (current.length > 0) groups.push(current)
  return groups
}
