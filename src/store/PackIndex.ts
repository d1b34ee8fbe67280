import { InvalidImageError, InvalidPackError } from '../errors/index.js'
import { type Digest, isDigest } from '../objects/digest.js'
import { previewValue } from '../util/previewValue.js'
import { parseStrictJson } from '../util/strictJson.js'

/**
 * What a pack holds. A pack is a run of zstd frames; `frames` gives each frame's
 * compressed length and decompressed size, in order (so offsets are running sums), and
 * `objects` gives each object's digest, its offset in the decompressed stream and its
 * size, sorted by offset. Every object lies inside one frame, so any run of frames can
 * be fetched (a byte range) and decompressed on its own.
 */
export interface PackIndex {
  kind: 'pack-index'
  schemaVersion: 1
  /** The pack this index describes: its digest and compressed size. */
  pack: Digest
  packSize: number
  /** `[compressed length, decompressed size]` of each frame. */
  frames: Array<[number, number]>
  /** `[digest, offset, size]`, offset in the decompressed stream. */
  objects: Array<[Digest, number, number]>
}

/** A frame with its place in the pack (compressed) and in the decompressed stream. */
export interface Frame {
  offset: number
  length: number
  start: number
  size: number
}

/** An object located: which frame holds it and where. */
export interface PackedObject {
  digest: Digest
  size: number
  offset: number
  frame: number
}

/** A checked index: frames and objects with their places worked out. */
export interface ReadIndex {
  pack: Digest
  packSize: number
  frames: Frame[]
  objects: PackedObject[]
}

const count = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0

/** The most bytes a frame may declare, and how to allow more (for the message). */
export interface FrameLimit {
  max: number
  hint: string
}

/** A pack of our own store, checked when it came: any frame size. */
export const NO_FRAME_LIMIT: FrameLimit = { max: Infinity, hint: '' }

/**
 * Parse and check an untrusted pack index: frames tile the pack exactly (no gap, no
 * overlap, lengths summing to the pack's size), no frame declares more than
 * `limit.max` (the image size limit), objects are unique, in order, do not overlap and each lies inside
 * one frame. Anything else is refused (exit 5) before a byte of the pack is read.
 */
export function parsePackIndex(bytes: Buffer, where: string, limit: FrameLimit): ReadIndex {
  let raw: unknown
  try {
    raw = parseStrictJson(bytes)
  } catch {
    throw new InvalidPackError(`${where} is not JSON`)
  }
  return checkPackIndex(raw, where, limit)
}

/** `parsePackIndex` of an index already parsed from JSON (a pack file's header holds one). */
export function checkPackIndex(value: unknown, where: string, limit: FrameLimit): ReadIndex {
  const raw = value as PackIndex
  if (raw?.kind !== 'pack-index' || !isDigest(raw.pack) || !count(raw.packSize) || !Array.isArray(raw.frames) || !Array.isArray(raw.objects)) {
    throw new InvalidPackError(`${where} is not a pack index`)
  }
  const frames: Frame[] = []
  let offset = 0
  let start = 0
  for (const f of raw.frames) {
    if (!Array.isArray(f) || !count(f[0]) || !count(f[1]) || f[0] === 0) throw new InvalidPackError(`${where}: malformed frame ${previewValue(f)}`)
    if (f[1] > limit.max) {
      throw new InvalidImageError(`${where}: a frame declares ${f[1]} bytes, more than the limit of ${limit.max}: refusing the pack (${limit.hint})`, {
        size: f[1],
        max: limit.max,
      })
    }
    frames.push({ offset, length: f[0], start, size: f[1] })
    offset += f[0]
    start += f[1]
  }
  if (offset !== raw.packSize) throw new InvalidPackError(`${where}: its frames add up to ${offset} bytes, but the pack is ${raw.packSize}`)
  const objects: PackedObject[] = []
  const seen = new Set<Digest>()
  let end = 0
  let frame = 0
  for (const o of raw.objects) {
    if (!Array.isArray(o) || !isDigest(o[0]) || !count(o[1]) || !count(o[2])) throw new InvalidPackError(`${where}: malformed entry ${previewValue(o)}`)
    const [digest, at, size] = o
    if (seen.has(digest)) throw new InvalidPackError(`${where} lists ${digest} twice`, { digest })
    if (at < end) throw new InvalidPackError(`${where}: entry ${digest} overlaps the one before it`, { digest })
    while (frame < frames.length && frames[frame]!.start + frames[frame]!.size <= at && !(size === 0 && frames[frame]!.start + frames[frame]!.size === at)) frame++
    const f = frames[frame]
    if (f === undefined || at < f.start || at + size > f.start + f.size)
      throw new InvalidPackError(`${where}: entry ${digest} does not lie inside one frame of the pack`, { digest })
    seen.add(digest)
    objects.push({ digest, size, offset: at, frame })
    end = at + size
  }
  return { pack: raw.pack, packSize: raw.packSize, frames, objects }
}

/**
 * An index's canonical JSON (what `canonicalBytes` gives), written directly: its arrays
 * hold only digests and integers, which JSON.stringify writes canonically, and the
 * generic writer took 60-240 ms for the index of 100k objects.
 */
export function packIndexBytes({ kind, schemaVersion, pack, packSize, frames, objects }: PackIndex): Buffer {
  const fields = `"kind":${JSON.stringify(kind)},"objects":${JSON.stringify(objects)},"pack":${JSON.stringify(pack)},"packSize":${packSize},"schemaVersion":${schemaVersion}`
  return Buffer.from(`{"frames":${JSON.stringify(frames)},${fields}}`, 'utf8')
}

/** The index of a checked pack, as it is written (what `checkPackIndex` reads back). */
export function packIndexOf(index: ReadIndex): PackIndex {
  return {
    kind: 'pack-index',
    schemaVersion: 1,
    pack: index.pack,
    packSize: index.packSize,
    frames: index.frames.map((f): [number, number] => [f.length, f.size]),
    objects: index.objects.map((o): [Digest, number, number] => [o.digest, o.offset, o.size]),
  }
}
