import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { DigestMismatchError, ForkpointError, InvalidPackError } from '../../errors/index.js'
import { sha256 } from '../../objects/digest.js'
import { forEachLimit } from '../../util/forEachLimit.js'
import { decompressFrames } from './decompressFrames.js'
import type { Frame, PackedObject, ReadIndex } from '../../store/PackIndex.js'
import type { BlobStream } from '../transport/Transport.js'

/** Where a pack's bytes come from: a remote blob or a pack file. */
export interface PackSource {
  /** For messages: the pack and where it is. */
  where: string
  /** The pack's bytes from `offset`, `length` of them (a source may send more, or start earlier: the reader copes). */
  open(offset: number, length: number, signal?: AbortSignal): Promise<BlobStream | null>
}

/** Needed frames closer than this are fetched in one range (a request costs more than these bytes). */
const GAP_BYTES = 256 * 1024

interface Range {
  offset: number
  length: number
  start: number
  /** The frames the range spans, wanted or in a gap between wanted ones, and the number of the frame after them. */
  frames: Frame[]
  next: number
  objects: PackedObject[]
}

/**
 * Fetch the frames of a pack that hold wanted objects, as few byte ranges as the
 * wanted frames allow (the whole pack in one when all are wanted), decompress each
 * range no further than its frames declare, check every wanted object's digest and
 * hand it to `accept` (a view of the decompressed bytes where the object lies in one
 * piece: copy what is kept). Returns the compressed bytes fetched. A range that is short,
 * does not decompress, decompresses to more than declared, or yields an object that
 * does not hash to its name is refused (exit 5).
 */
export async function readPackRanges({
  source,
  index,
  wanted,
  accept,
  signal,
  onBytes,
  concurrency = 4,
}: {
  source: PackSource
  index: ReadIndex
  wanted: (object: PackedObject) => boolean
  accept: (object: PackedObject, bytes: Buffer) => Promise<void> | void
  signal?: AbortSignal | undefined
  onBytes?: ((n: number) => void) | undefined
  concurrency?: number
}): Promise<number> {
  const ranges = planRanges(index, wanted)
  let fetched = 0
  await forEachLimit(ranges, concurrency, async (range) => {
    signal?.throwIfAborted()
    await readRange(source, range, accept, signal, (n) => {
      fetched += n
      onBytes?.(n)
    })
  })
  return fetched
}

/** The runs of frames holding wanted objects, merged across small gaps. */
function planRanges(index: ReadIndex, wanted: (object: PackedObject) => boolean): Range[] {
  const byFrame = new Map<number, PackedObject[]>()
  for (const o of index.objects) {
    if (!wanted(o)) continue
    const list = byFrame.get(o.frame) ?? []
    list.push(o)
    byFrame.set(o.frame, list)
  }
  const ranges: Range[] = []
  for (const frameNo of [...byFrame.keys()].sort((a, b) => a - b)) {
    const frame = index.frames[frameNo]!
    const last = ranges[ranges.length - 1]
    if (last && frame.offset - (last.offset + last.length) <= GAP_BYTES) {
      last.length = frame.offset + frame.length - last.offset
      while (last.next <= frameNo) last.frames.push(index.frames[last.next++]!)
      last.objects.push(...byFrame.get(frameNo)!)
    } else {
      ranges.push({ offset: frame.offset, length: frame.length, start: frame.start, frames: [frame], next: frameNo + 1, objects: [...byFrame.get(frameNo)!] })
    }
  }
  return ranges
}

async function readRange(
  source: PackSource,
  range: Range,
  accept: (object: PackedObject, bytes: Buffer) => Promise<void> | void,
  signal: AbortSignal | undefined,
  onBytes: (n: number) => void,
): Promise<void> {
  const stream = await source.open(range.offset, range.length, signal)
  if (stream === null) throw new InvalidPackError(`${source.where} is not there`)
  let pos = range.start
  let t = 0
  let parts: Buffer[] = []
  let have = 0
  const targets = range.objects
  const accepting: { failure: { error: unknown } | null } = { failure: null } // what `accept` threw: the caller's failure, not the pack's
  const take = async (chunk: Buffer) => {
    const cs = pos
    const ce = pos + chunk.length
    pos = ce
    while (t < targets.length) {
      const o = targets[t]!
      const need = o.offset + have
      if (need >= ce && o.size > have) return
      const end = Math.min(o.offset + o.size, ce)
      if (end > need) {
        parts.push(chunk.subarray(need - cs, end - cs))
        have += end - need
      }
      if (have < o.size) return
      const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts, have) // one piece: a view, not a copy
      if (sha256(bytes) !== o.digest) {
        throw new DigestMismatchError(`object ${o.digest} in ${source.where} hashes to ${sha256(bytes)}: refusing it`, { digest: o.digest, actual: sha256(bytes) })
      }
      signal?.throwIfAborted() // an interrupted transfer keeps the objects accepted so far
      try {
        await accept(o, bytes)
      } catch (error) {
        accepting.failure = { error }
        throw error
      }
      parts = []
      have = 0
      t++
    }
  }
  try {
    await pipeline(
      Readable.from(exactly(stream, range, onBytes, source.where)),
      (compressed: AsyncIterable<Buffer>) => decompressFrames(compressed, range.frames, source.where),
      async (decompressed: AsyncIterable<Buffer>) => {
        for await (const chunk of decompressed) await take(chunk)
      },
    )
  } catch (err) {
    if (accepting.failure !== null) throw accepting.failure.error
    if (err instanceof ForkpointError || signal?.aborted) throw err
    throw new InvalidPackError(
      `${source.where} does not decompress at ${range.offset} (a wrong index or a damaged pack): ${(err as Error).message}`,
      { offset: range.offset },
      { cause: err },
    )
  }
}

/** The range's bytes from a stream that may start earlier (a source that ignored the range) and go on after it. */
async function* exactly(stream: BlobStream, range: Range, onBytes: (n: number) => void, where: string): AsyncGenerator<Buffer> {
  if (stream.offset > range.offset) throw new InvalidPackError(`${where}: the remote sent bytes from ${stream.offset}, not ${range.offset}`)
  let skip = range.offset - stream.offset
  let left = range.length
  for await (const raw of stream.body) {
    let chunk = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
    if (skip > 0) {
      const dropped = Math.min(skip, chunk.length)
      skip -= dropped
      chunk = chunk.subarray(dropped)
    }
    if (chunk.length === 0) continue
    const part = chunk.subarray(0, left)
    left -= part.length
    onBytes(part.length)
    yield part
    if (left === 0) return
  }
  if (left > 0) throw new InvalidPackError(`${where} ends ${left} bytes short of the frames its index declares (truncated)`)
}
