import { DigestMismatchError, InvalidPackError } from '../errors/index.js'
import type { Frame, PackedObject, ReadIndex } from '../store/PackIndex.js'
import { type CheckedFrame, FrameCheckers, FrameFailed } from './FrameCheckers.js'
import type { PackSource } from './readPackRanges.js'
import type { BlobStream } from './Transport.js'
import type { FilePlace } from '../world/ArrivingCheckout.js'

/** Decompressing and checking frames, and writing the files they fill, takes this many threads besides the one reading the pack. */
export const CHECK_THREADS = 2

/** What a whole pack's reader is told, frame by frame in pack order. */
export interface FrameArrivals {
  /** A frame's objects, each checked against its digest, with the bytes of those that look structured (`{"`); answers the files to fill with each object's bytes ([] for none). */
  frame(objects: readonly PackedObject[], structured: ReadonlyMap<PackedObject, Buffer>): Promise<FilePlace[][]> | FilePlace[][]
}

/**
 * Read a whole pack from `source` as it comes, frame by frame: threads decompress each
 * frame no further than its index declares, check every object against its digest and
 * hand back the ones that look structured; `arrivals.frame` is told of each frame in
 * order and answers which files its objects fill, which the thread that checked the
 * frame then writes. A frame that does not decompress to what its index declares, or an
 * object that does not hash to its name, is refused (exit 5); a pack cut short too. A
 * failure of the source or of a write is thrown as it is. Returns when every frame is
 * checked and its writes asked for (and, with threads of its own, done), or, after a
 * failure, once no thread writes any more.
 */
export async function readPackFrames({
  source,
  index,
  arrivals,
  signal,
  threads,
}: {
  source: PackSource
  index: ReadIndex
  arrivals: FrameArrivals
  signal?: AbortSignal | undefined
  /** Threads to use, whose writes the caller waits for (`settle`) and which it closes; else threads of the pack's own, waited for and closed here. */
  threads?: FrameCheckers | undefined
}): Promise<void> {
  const byFrame: PackedObject[][] = index.frames.map(() => [])
  for (const o of index.objects) byFrame[o.frame]!.push(o)
  const checkers = threads ?? new FrameCheckers(CHECK_THREADS)
  const failure: { error: unknown } = { error: null }
  const failed = (error: unknown) => (failure.error ??= error)
  let ordered: Promise<void> = Promise.resolve() // frames told to `arrivals` one after another, in order (their writes go on side by side)
  try {
    const stream = await source.open(0, index.packSize, signal)
    if (stream === null) throw new InvalidPackError(`${source.where} is not there`)
    for await (const { n, bytes } of framesOf(stream, index, source.where)) {
      if (failure.error !== null) break
      signal?.throwIfAborted()
      const frame = index.frames[n]!
      await checkers.ready(frame.size)
      const objects = byFrame[n]!
      const checking = checkers.check(
        bytes,
        frame.size,
        objects.map((o) => [o.digest, o.offset - frame.start, o.size]),
      )
      checking.catch(() => undefined) // awaited in order below
      const refused = (err: unknown) => Promise.reject(named(err, source.where, frame, n))
      ordered = ordered.then(async () => {
        signal?.throwIfAborted()
        await deliver(checkers, checking, objects, arrivals).catch(refused)
      })
      ordered.catch(failed)
    }
    await ordered
    if (threads === undefined) await checkers.settle()
    signal?.throwIfAborted() // a pull stopped after the last frame arrived is stopped all the same
  } catch (err) {
    await checkers.close() // no thread writes past here
    await ordered.catch(() => undefined) // nor does the listener plan any more
    throw err
  }
  if (threads === undefined) await checkers.close()
}

/** Tell `arrivals` of a checked frame and have its files written (not waiting for the writes). */
async function deliver(checkers: FrameCheckers, checking: Promise<CheckedFrame>, objects: readonly PackedObject[], arrivals: FrameArrivals): Promise<void> {
  const checked = await checking
  const structured = new Map(checked.structured.map(([i, bytes]) => [objects[i]!, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]))
  const places = await arrivals.frame(objects, structured)
  const writes: Array<[number, string | Uint8Array, number]> = []
  places.forEach((files, i) => {
    for (const { path, mode } of files) writes.push([i, path, mode])
  })
  checkers.write(checked, writes)
}

/** A thread's report of a frame as the error to throw: the pack's fault (exit 5); anything else as it is. */
function named(err: unknown, where: string, frame: Frame, n: number): Error {
  if (!(err instanceof FrameFailed)) return err instanceof Error ? err : new Error(String(err))
  const f = err.failure
  if (f.kind === 'digest') return new DigestMismatchError(`object ${f.digest} in ${where} hashes to ${f.actual}: refusing it`, { digest: f.digest, actual: f.actual })
  return new InvalidPackError(`${where}: frame ${n} at ${frame.offset} does not decompress as its index declares (${f.message}): refusing it`, { offset: frame.offset })
}

/** The pack's frames, each as one buffer of its own (to be moved to a thread), from a stream of the pack from its start. */
async function* framesOf(stream: BlobStream, index: ReadIndex, where: string): AsyncGenerator<{ n: number; bytes: Buffer }> {
  if (stream.offset !== 0) throw new InvalidPackError(`${where}: the remote sent bytes from ${stream.offset}, not from the start`)
  let n = 0
  let bytes = index.frames.length > 0 ? Buffer.allocUnsafeSlow(index.frames[0]!.length) : Buffer.alloc(0)
  let have = 0
  for await (const raw of stream.body) {
    let chunk = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
    while (chunk.length > 0 && n < index.frames.length) {
      const take = Math.min(chunk.length, bytes.length - have)
      chunk.copy(bytes, have, 0, take)
      have += take
      chunk = chunk.subarray(take)
      if (have < bytes.length) break
      yield { n, bytes }
      n++
      have = 0
      if (n < index.frames.length) bytes = Buffer.allocUnsafeSlow(index.frames[n]!.length)
    }
    if (n === index.frames.length) return
  }
  if (n < index.frames.length) throw new InvalidPackError(`${where} ends before the end of frame ${n} its index declares (truncated)`)
}
