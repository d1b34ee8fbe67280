import { availableParallelism } from 'node:os'
import type { Worker } from 'node:worker_threads'
import type { Compressor } from 'zstd-napi'
import { InternalError } from '../errors/index.js'
import { builtEntry } from '../util/builtEntry.js'
import { requirePackage } from '../util/requirePackage.js'

/**
 * Below this many bytes a pack is compressed on one thread: starting the second one (a
 * worker loading zstd, to its first reply) took 35-42 ms, and text like the benchmark's
 * compresses at about 4.6 ms a MiB here (460 ms for 100 MB), so a second thread saves
 * about that much at 16 MiB (throwaway measurements, 2026-11-26).
 */
const HELPER_MIN_BYTES = 16 * 1024 * 1024

/** Frames handed to the helper and not yet back: enough to keep it busy while this thread compresses its own. */
const HELPER_QUEUE = 2

/** A zstd compressor for pack frames: the level asked, each frame with its checksum. */
export function frameCompressor(level: number): Compressor {
  const { Compressor } = requirePackage('zstd-napi') as typeof import('zstd-napi')
  const compressor = new Compressor()
  compressor.setParameters({ compressionLevel: level, checksumFlag: true })
  return compressor
}

/** A compressed frame, with the size of the bytes it holds. */
export interface Frame {
  bytes: Buffer
  rawSize: number
}

/** Compresses a pack's frames and gives them back in the order they came. */
export interface FrameQueue {
  /** Queue a frame's bytes; returns the compressed frames now ready, in order. */
  add(raw: Buffer): Promise<Frame[]>
  /** Every frame not yet returned, in order. */
  finish(): Promise<Frame[]>
  close(): Promise<void>
}

/**
 * Frames are independent, so a big pack is compressed on two threads: this one and a
 * worker that takes a frame whenever it has fewer than HELPER_QUEUE. Each frame is
 * compressed alone with the same parameters whichever thread takes it, so the pack's
 * bytes are the same as on one thread.
 */
export function openFrameQueue(level: number, totalBytes: number): FrameQueue {
  const local = frameCompressor(level)
  const helper = totalBytes >= HELPER_MIN_BYTES && availableParallelism() > 1 ? startHelper(level) : null
  const queue: Array<{ frame: Frame | null; ready: Promise<unknown> }> = []
  let lent = 0
  const take = (): Frame[] => {
    const out: Frame[] = []
    while (queue[0]?.frame) out.push(queue.shift()!.frame!)
    return out
  }
  return {
    async add(raw) {
      if (helper?.alive() && lent < HELPER_QUEUE) {
        lent++
        // a failed helper costs time, not the push: the frame is compressed here instead, to the same bytes
        const item: (typeof queue)[number] = { frame: null, ready: Promise.resolve() }
        item.ready = helper
          .compress(raw)
          .catch(() => local.compress(raw))
          .then((bytes) => {
            lent--
            item.frame = { bytes, rawSize: raw.length }
          })
        item.ready.catch(() => {}) // a failure is thrown where the frame is awaited, in order
        queue.push(item)
      } else {
        queue.push({ frame: { bytes: local.compress(raw), rawSize: raw.length }, ready: Promise.resolve() })
      }
      // the helper's replies come in through the event loop
      if (helper) await new Promise((resolve) => setImmediate(resolve))
      if (queue.length > 2 * HELPER_QUEUE) await queue[0]!.ready
      return take()
    },
    async finish() {
      await Promise.all(queue.map((item) => item.ready))
      return take()
    },
    async close() {
      await helper?.worker.terminate()
    },
  }
}

function startHelper(level: number): { worker: Worker; alive: () => boolean; compress: (raw: Buffer) => Promise<Buffer> } | null {
  let entry: string
  try {
    entry = builtEntry('registry', 'compressWorker.js')
  } catch {
    return null // running from unbuilt sources: one thread compresses it all, to the same bytes
  }
  const { Worker } = requirePackage('node:worker_threads') as typeof import('node:worker_threads')
  const worker = new Worker(entry, { workerData: { level } })
  const waiting = new Map<number, { resolve: (frame: Buffer) => void; reject: (err: Error) => void }>()
  let dead: Error | null = null
  const failAll = (err: Error) => {
    dead ??= err
    for (const { reject } of waiting.values()) reject(err)
    waiting.clear()
  }
  worker.on('message', ({ id, frame }: { id: number; frame: Uint8Array }) => {
    waiting.get(id)?.resolve(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength))
    waiting.delete(id)
  })
  worker.on('error', failAll)
  worker.on('exit', (code) => failAll(new InternalError(`the compressing thread exited (${code}) with frames to compress`)))
  let next = 0
  return {
    worker,
    alive: () => dead === null,
    compress: (raw) =>
      new Promise<Buffer>((resolve, reject) => {
        if (dead) return reject(dead)
        const id = next++
        waiting.set(id, { resolve, reject })
        worker.postMessage({ id, raw })
      }),
  }
}
