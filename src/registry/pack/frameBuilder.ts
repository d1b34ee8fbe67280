import { availableParallelism } from 'node:os'
import type { Worker } from 'node:worker_threads'
import type { Compressor } from 'zstd-napi'
import { InternalError, StoreCorruptError } from '../../errors/index.js'
import { sha256 } from '../../objects/digest.js'
import { DigestCheck } from '../../store/verifiedRead.js'
import { startBuiltWorker } from '../../util/builtEntry.js'
import { frameCompressor } from '../../store/frameCompressor.js'
import type { BlobRef } from '../manifest/Descriptor.js'

/**
 * A pack of at least this many bytes, or objects, is built on two threads. Starting the
 * second one (a worker loading zstd, to its first reply) took 35-42 ms. Text like the
 * benchmark's compresses at about 4.6 ms a MiB here, so a second thread saves that much
 * at 16 MiB; reading an object file (open, read, close) took about 12 µs (1.18 s for the
 * 100k objects of the benchmark's cold push), so it saves that much at about 7,000
 * objects (throwaway measurements, 2026-11-26).
 */
const HELPER_MIN_BYTES = 16 * 1024 * 1024
const HELPER_MIN_OBJECTS = 8192

/** Frames handed to the helper and not yet back: enough to keep it busy while this thread builds its own. */
const HELPER_QUEUE = 2

/** A compressed frame, with the size of the bytes it holds. */
export interface Frame {
  bytes: Buffer
  rawSize: number
}

/**
 * The objects' bytes, each checked against its digest as it is read (`read` gives null
 * for one it cannot find; `where` names an object's place for messages), compressed as
 * one frame.
 * @throws {StoreCorruptError} an object is not there
 * @throws {DigestMismatchError} an object's bytes are not what its digest names
 */
export function buildFrame(objects: readonly BlobRef[], { read, where, compressor }: FrameReader & { compressor: Compressor }): Frame {
  const parts = objects.map((object) => {
    const bytes = read(object)
    // a push does not look locally for what the repository holds; if a pack of it is not reused after all, that object must be here
    if (bytes === null) throw new StoreCorruptError(`object ${object.digest} is missing from the store, needed for the pack; run 'forkpoint verify'`, { digest: object.digest })
    if (bytes.length !== object.size || sha256(bytes) !== object.digest) {
      const check = new DigestCheck(object, `(${where(object)})`)
      check.update(bytes)
      check.check()
    }
    return bytes
  })
  const raw = Buffer.concat(parts)
  return { bytes: compressor.compress(raw), rawSize: raw.length }
}

/** How a thread reads a pack's objects. */
export interface FrameReader {
  /** An object's bytes, unchecked; null when they cannot be found. */
  read: (object: BlobRef) => Buffer | null
  where: (object: BlobRef) => string
}

/** Builds a pack's frames and gives them back in the order they came. */
export interface FrameQueue {
  /** Count objects of the pack as they become known: past HELPER_MIN_BYTES or HELPER_MIN_OBJECTS, the second thread starts. */
  grow(objects: number, bytes: number): void
  /** Start building a frame on the second thread now, ahead of its turn, if it has room (else null); hand the promise to `add` in its turn. */
  lend(objects: BlobRef[]): Promise<Frame | null> | null
  /** Queue a frame's objects (`ahead`: the frame `lend` started); returns the frames now ready, in order. */
  add(objects: BlobRef[], ahead?: Promise<Frame | null> | null): Promise<Frame[]>
  /** Queue a frame built already (one the store's packs hold); returns the frames now ready, in order. */
  addBuilt(frame: Frame): Promise<Frame[]>
  /** Every frame not yet returned, in order. */
  finish(): Promise<Frame[]>
  /** Whether a second thread took part (it was worth starting, and could start). */
  readonly threads: 1 | 2
  /** Frames the second thread built (the others were built on this one). */
  readonly helperFrames: number
  close(): Promise<void>
}

/**
 * Frames are independent, so a big pack is built on two threads: this one and a worker
 * that takes a frame (reads its objects' files, checks and compresses them) whenever it
 * has fewer than HELPER_QUEUE, or one lent to it ahead of its turn while this thread does
 * other work (a push's walk). Each frame is compressed alone with the same parameters
 * whichever thread takes it, so the pack's bytes are the same as on one thread. Both read
 * an object from its file or the store's packs. A frame the worker cannot build (an
 * object missing or corrupt) is built here, where errors are raised.
 */
export function openFrameQueue({
  level,
  reader,
  storeDirs,
}: {
  level: number
  /** How this thread reads an object (from its file or the store's packs). */
  reader: FrameReader
  /** The store's object files and packs, which the helper reads. */
  storeDirs: StoreDirs
}): FrameQueue {
  const local = frameCompressor(level)
  const buildHere = (frameObjects: BlobRef[]) => buildFrame(frameObjects, { ...reader, compressor: local })
  let helper: ReturnType<typeof startHelper> = null
  const known = { objects: 0, bytes: 0, started: false }
  const queue: Array<{ frame: Frame | null; ready: Promise<unknown> }> = []
  let lent = 0
  let helperFrames = 0
  let closed = false
  const take = (): Frame[] => {
    const out: Frame[] = []
    while (queue[0]?.frame) out.push(queue.shift()!.frame!)
    return out
  }
  /** The frames ready, once the helper's replies came in (through the event loop) and at most twice its queue waits. */
  const settle = async (): Promise<Frame[]> => {
    if (helper) await new Promise((resolve) => setImmediate(resolve))
    if (queue.length > 2 * HELPER_QUEUE) await queue[0]!.ready
    return take()
  }
  const lend = (frameObjects: BlobRef[]): Promise<Frame | null> | null => {
    if (!helper?.alive() || lent >= HELPER_QUEUE) return null
    lent++
    // a frame the helper could not build costs time, not the push: it is built here instead, to the same bytes
    return helper
      .build(frameObjects)
      .catch(() => null)
      .finally(() => lent--)
  }
  return {
    get threads() {
      return helper ? 2 : 1
    },
    get helperFrames() {
      return helperFrames
    },
    grow(objects, bytes) {
      known.objects += objects
      known.bytes += bytes
      if (known.started || (known.bytes < HELPER_MIN_BYTES && known.objects < HELPER_MIN_OBJECTS)) return
      known.started = true
      if (availableParallelism() > 1) helper = startHelper(level, storeDirs)
    },
    lend,
    async add(frameObjects, ahead = null) {
      const building = ahead ?? lend(frameObjects)
      if (building) {
        const item: (typeof queue)[number] = { frame: null, ready: Promise.resolve() }
        item.ready = building.then((frame) => {
          if (closed) return // the pack failed, and closing stopped the helper: nothing more to build
          if (frame) helperFrames++
          item.frame = frame ?? buildHere(frameObjects)
        })
        item.ready.catch(() => {}) // a failure is thrown where the frame is awaited, in order
        queue.push(item)
      } else {
        queue.push({ frame: buildHere(frameObjects), ready: Promise.resolve() })
      }
      return settle()
    },
    addBuilt(frame) {
      queue.push({ frame, ready: Promise.resolve() })
      return settle()
    },
    async finish() {
      await Promise.all(queue.map((item) => item.ready))
      return take()
    },
    async close() {
      closed = true
      await helper?.worker.terminate()
    },
  }
}

/** What the helper answers: the frame, or null when it could not build it. */
type HelperReply = { id: number; frame: Uint8Array; rawSize: number } | { id: number; frame: null }

/** Where the helper reads objects: the store's object files and its packs. */
export interface StoreDirs {
  objectsDir: string
  packsDir: string
}

function startHelper(level: number, storeDirs: StoreDirs): { worker: Worker; alive: () => boolean; build: (objects: BlobRef[]) => Promise<Frame | null> } | null {
  let worker: Worker
  try {
    worker = startBuiltWorker('registry/pack', 'frameWorker.js', { level, ...storeDirs })
  } catch {
    return null // running from unbuilt sources: one thread builds it all, to the same bytes
  }
  const waiting = new Map<number, { resolve: (frame: Frame | null) => void; reject: (err: Error) => void }>()
  let dead: Error | null = null
  const failAll = (err: Error) => {
    dead ??= err
    for (const { reject } of waiting.values()) reject(err)
    waiting.clear()
  }
  worker.on('message', (reply: HelperReply) => {
    const frame = reply.frame && { bytes: Buffer.from(reply.frame.buffer, reply.frame.byteOffset, reply.frame.byteLength), rawSize: reply.rawSize }
    waiting.get(reply.id)?.resolve(frame)
    waiting.delete(reply.id)
  })
  worker.on('error', failAll)
  worker.on('exit', (code) => failAll(new InternalError(`the pack's second thread exited (${code}) with frames to build`)))
  let next = 0
  return {
    worker,
    alive: () => dead === null,
    build: (objects) =>
      new Promise<Frame | null>((resolve, reject) => {
        if (dead) return reject(dead)
        const id = next++
        waiting.set(id, { resolve, reject })
        worker.postMessage({ id, objects })
      }),
  }
}
