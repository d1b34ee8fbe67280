import { constants } from 'node:buffer'
import { DigestMismatchError, InvalidPackError } from '../../errors/index.js'
import type { Frame, PackedObject, ReadIndex } from '../../store/PackIndex.js'
import type { FilePlace } from '../../world/checkout/ArrivingCheckout.js'
import { fsPath } from '../../util/fsName.js'
import { CHECK_THREADS, type CheckedFrame, FrameCheckers, FrameFailed } from './FrameCheckers.js'
import type { PackSource } from './readPackRanges.js'
import type { BlobStream } from '../transport/Transport.js'

/** What a whole pack's reader is told, frame by frame in pack order (one call at a time). */
export interface FrameArrivals {
  /** A frame's objects, each checked against its digest, with the bytes of those that look structured (`{"`); answers the files to fill with each object's bytes ([] for none). */
  frame(objects: readonly PackedObject[], structured: ReadonlyMap<PackedObject, Buffer>): Promise<Array<readonly FilePlace[]>> | Array<readonly FilePlace[]>
}

/**
 * Read a whole pack from `source` as it comes, frame by frame: threads decompress each
 * frame no further than its index declares, check every object against its digest and
 * hand back the ones that look structured; `arrivals.frame` is told of each frame in
 * order and answers which files its objects fill, which the thread that checked the
 * frame then writes. A frame that does not decompress to what its index declares, that
 * declares bytes no object of it holds, or an object that does not hash to its name, is
 * refused (exit 5); a pack cut short too. A failure of the source, of `arrivals` or of a
 * write (`FileWriteError`) is thrown as it is. `threads`: the caller's, whose writes it
 * waits for (`settle`) and which it closes (they are stopped here on a failure); else
 * threads of the pack's own, waited for and closed here. Returns once every frame is
 * checked and its writes asked for, or, after a failure, once no thread writes any more.
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
  threads?: FrameCheckers | undefined
}): Promise<void> {
  const checkers = threads ?? new FrameCheckers(CHECK_THREADS)
  const stopOnAbort = () => checkers.stop(signal!.reason as Error)
  signal?.addEventListener('abort', stopOnAbort, { once: true })
  const delivery = new Delivery(checkers, arrivals, source.where)
  try {
    const stream = await source.open(0, index.packSize, signal)
    if (stream === null) throw new InvalidPackError(`${source.where} is not there`)
    const byFrame = objectsByFrame(index, source.where)
    for await (const { n, bytes } of framesOf(stream, index, source.where)) {
      signal?.throwIfAborted()
      const frame = index.frames[n]!
      await checkers.ready(frame.length, frame.size) // throws once a delivery failed: it stopped the checkers
      const objects = byFrame[n]!
      delivery.add(
        checkers.check(
          bytes,
          frame.size,
          objects.map((o) => [o.digest, o.offset - frame.start, o.size]),
        ),
        objects,
        frame,
        n,
      )
    }
    await delivery.done()
    if (threads === undefined) await checkers.settle()
    signal?.throwIfAborted() // a pull stopped after the last frame arrived is stopped all the same
  } catch (err) {
    await checkers.close() // no thread writes past here
    await delivery.done().catch(() => undefined) // nor does `arrivals` plan any more
    throw err
  } finally {
    signal?.removeEventListener('abort', stopOnAbort)
  }
  if (threads === undefined) await checkers.close()
}

/**
 * Checked frames told to `arrivals` one after another, in order, and their files asked
 * of the threads (the writes go on side by side). The first failure stops the checkers,
 * so a reader waiting for room (`ready`) gets it instead of waiting for frames no one
 * will free.
 */
class Delivery {
  private chain: Promise<void> = Promise.resolve()

  constructor(
    private readonly checkers: FrameCheckers,
    private readonly arrivals: FrameArrivals,
    private readonly where: string,
  ) {}

  add(checking: Promise<CheckedFrame>, objects: readonly PackedObject[], frame: Frame, n: number): void {
    checking.catch(() => undefined) // taken in order below
    this.chain = this.chain.then(() => this.deliver(checking, objects).catch((err: unknown) => Promise.reject(named(err, this.where, frame, n))))
    this.chain.catch((err: Error) => this.checkers.stop(err))
  }

  /** Resolves once every frame added is told; rejects with the first failure. */
  done(): Promise<void> {
    return this.chain
  }

  private async deliver(checking: Promise<CheckedFrame>, objects: readonly PackedObject[]): Promise<void> {
    const checked = await checking
    const structured = new Map(checked.structured.map(([i, bytes]) => [objects[i]!, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]))
    const places = await this.arrivals.frame(objects, structured)
    const writes: Array<[number, string | Uint8Array, number]> = []
    places.forEach((files, i) => {
      for (const { abs, entry } of files) writes.push([i, fsPath(abs), entry.mode])
    })
    this.checkers.write(checked, writes)
  }
}

/** Each frame's objects; a frame declaring bytes its objects do not hold is refused (an honest pack has none, and a thread holds what a frame declares). */
function objectsByFrame(index: ReadIndex, where: string): PackedObject[][] {
  const byFrame: PackedObject[][] = index.frames.map(() => [])
  for (const o of index.objects) byFrame[o.frame]!.push(o)
  byFrame.forEach((objects, n) => {
    const held = objects.reduce((sum, o) => sum + o.size, 0)
    const { offset, size } = index.frames[n]!
    if (held !== size) throw new InvalidPackError(`${where}: frame ${n} at ${offset} declares ${size} bytes, but its objects hold ${held}: refusing it`, { offset })
  })
  return byFrame
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
  const buffer = (n: number) => {
    const { length, offset } = index.frames[n]!
    if (length > constants.MAX_LENGTH) throw new InvalidPackError(`${where}: frame ${n} at ${offset} is ${length} bytes, more than one buffer holds: refusing it`, { offset })
    return Buffer.allocUnsafeSlow(length)
  }
  let n = 0
  let bytes = index.frames.length > 0 ? buffer(0) : Buffer.alloc(0)
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
      if (n < index.frames.length) bytes = buffer(n)
    }
    if (n === index.frames.length) return
  }
  if (n < index.frames.length) throw new InvalidPackError(`${where} ends before the end of frame ${n} its index declares (truncated)`)
}
