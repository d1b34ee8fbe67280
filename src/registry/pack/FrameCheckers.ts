import type { Worker } from 'node:worker_threads'
import { FileWriteError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import { startBuiltWorker } from '../../util/builtEntry.js'

/** Threads that check a pack read whole, besides the one reading it. */
export const CHECK_THREADS = 2

/** A frame to check: its compressed bytes (moved to the thread), declared size, and objects `[digest, offset in the frame, size]`. */
export interface CheckFrame {
  type: 'check'
  id: number
  compressed: ArrayBuffer
  size: number
  objects: Array<[Digest, number, number]>
}

/** Files to fill from a checked frame: `[object's place in the frame's list, path (bytes for a name that is not UTF-8), mode]`; none only frees the frame. */
export interface WriteFrame {
  type: 'write'
  id: number
  writes: Array<[number, string | Uint8Array, number]>
}

/** Why a frame was refused: it does not decompress to what its index declares, or an object does not hash to its name. */
export type CheckFailure = { kind: 'frame'; message: string } | { kind: 'digest'; digest: Digest; actual: Digest }

export type CheckReply =
  | { id: number; failure: CheckFailure }
  | { id: number; failure: null; /** objects that look structured (`{"`), by place in the frame's list */ structured: Array<[number, Uint8Array]> }

export interface WriteReply {
  id: number
  failure: { message: string; code: string | null; path: string } | null
}

/** What a thread reported of a frame, for the caller to name (it knows the pack). */
export class FrameFailed extends Error {
  constructor(readonly failure: CheckFailure) {
    super(failure.kind)
  }
}

/** A frame checked on a thread, held there until `write`. */
export interface CheckedFrame {
  readonly id: number
  readonly thread: number
  readonly held: number
  structured: Array<[number, Uint8Array]>
}

/**
 * Bytes the threads may hold (frames sent, checked or waiting for their writes), beyond
 * one frame: enough that the download never waits on them for long (held back by a few
 * frames, as first built, a clone's pull went at a third of the network's speed, the
 * connection stopping and starting), few enough to bound memory.
 */
const HELD_BYTES = 64 * 1024 * 1024

/** What a frame counts against HELD_BYTES: its compressed bytes on the way, its declared size once decompressed. */
function held(length: number, size: number): number {
  return Math.max(length, size)
}

interface Thread {
  worker: Worker
  /** Frames it holds. */
  frames: number
}

/**
 * Threads that decompress and check a pack's frames and write the files their blobs
 * fill, so that the thread reading the pack does only that: a clone's main thread had
 * been its limit (decompressing, hashing, and a promise chain per object). A frame stays
 * held on its thread from `check` until `write` (which frees it), and `ready` waits while
 * the threads hold HELD_BYTES, so the reader holds back the download. A frame's failure
 * comes back as `FrameFailed` for the caller to name. Writes go on while the caller does
 * other things (a clone checks the image meanwhile); `settle` waits for them. `stop`
 * breaks the checkers (every question waiting, and every later one, gets its error);
 * `close` also ends the threads, writing or not.
 */
export class FrameCheckers {
  private readonly threads: Thread[]
  private readonly replies = new Map<number, { resolve: (reply: CheckReply | WriteReply) => void; reject: (err: Error) => void }>()
  private readonly writing = new Set<Promise<void>>()
  private nextId = 0
  private heldBytes = 0
  private room: Array<() => void> = []
  private broken: Error | null = null

  constructor(count: number) {
    this.threads = Array.from({ length: count }, () => {
      const thread: Thread = { worker: startBuiltWorker('registry/pack', 'frameCheckWorker.js'), frames: 0 }
      thread.worker.on('message', (reply: CheckReply | WriteReply) => this.answered(reply))
      thread.worker.on('error', (err) => this.stop(err))
      return thread
    })
  }

  /** Wait until the threads can take a frame of `length` compressed bytes declaring `size`; throws what broke them, if anything did. */
  async ready(length: number, size: number): Promise<void> {
    while (this.heldBytes > 0 && this.heldBytes + held(length, size) > HELD_BYTES && this.broken === null) await new Promise<void>((resolve) => this.room.push(resolve))
    if (this.broken !== null) throw this.broken
  }

  /** Check a frame on the least busy thread (after `ready`); resolves with its structured objects, or rejects with its failure (`FrameFailed`). */
  async check(compressed: Buffer, size: number, objects: Array<[Digest, number, number]>): Promise<CheckedFrame> {
    const thread = this.threads.reduce((best, t, i) => (t.frames < this.threads[best]!.frames ? i : best), 0)
    const holding = held(compressed.length, size)
    this.threads[thread]!.frames++
    this.heldBytes += holding
    const id = this.nextId++
    const whole = compressed.byteOffset === 0 && compressed.byteLength === compressed.buffer.byteLength
    const moved = (whole ? compressed.buffer : compressed.buffer.slice(compressed.byteOffset, compressed.byteOffset + compressed.byteLength)) as ArrayBuffer // only a whole ArrayBuffer moves
    const reply = (await this.ask(thread, { type: 'check', id, compressed: moved, size, objects }, [moved])) as CheckReply
    if (reply.failure !== null) {
      this.free(thread, holding)
      throw new FrameFailed(reply.failure)
    }
    return { id, thread, held: holding, structured: reply.structured }
  }

  /**
   * Fill files from a checked frame, then free it, without waiting: `settle` waits for
   * every write. A write that fails stops the checkers with a `FileWriteError`.
   */
  write(frame: CheckedFrame, writes: WriteFrame['writes']): void {
    const written: Promise<void> = this.ask(frame.thread, { type: 'write', id: frame.id, writes }).then(
      (reply) => {
        this.free(frame.thread, frame.held)
        const { failure } = reply as WriteReply
        if (failure !== null) this.stop(new FileWriteError(`cannot write ${failure.path}: ${failure.message}`, { path: failure.path, code: failure.code }))
        this.writing.delete(written)
      },
      () => {
        this.writing.delete(written) // the checkers broke: `settle` throws why
      },
    )
    this.writing.add(written)
  }

  /** Wait for every write asked for; throw what broke the checkers, if anything did. */
  async settle(): Promise<void> {
    while (this.writing.size > 0) await Promise.all([...this.writing])
    if (this.broken !== null) throw this.broken
  }

  /** Break the checkers: every question waiting, and every later one, gets `err` (the first given). */
  stop(err: Error): void {
    this.broken ??= err
    for (const { reject } of this.replies.values()) reject(this.broken)
    this.replies.clear()
    for (const wake of this.room.splice(0)) wake()
  }

  async close(): Promise<void> {
    this.stop(new Error('the frame checkers were closed'))
    await Promise.all(this.threads.map(({ worker }) => worker.terminate()))
  }

  private ask(thread: number, message: CheckFrame | WriteFrame, transfer: ArrayBuffer[] = []): Promise<CheckReply | WriteReply> {
    if (this.broken !== null) return Promise.reject(this.broken)
    return new Promise((resolve, reject) => {
      this.replies.set(message.id, { resolve, reject })
      this.threads[thread]!.worker.postMessage(message, transfer)
    })
  }

  private answered(reply: CheckReply | WriteReply): void {
    const waiting = this.replies.get(reply.id)
    this.replies.delete(reply.id)
    waiting?.resolve(reply)
  }

  private free(thread: number, held: number): void {
    this.threads[thread]!.frames--
    this.heldBytes -= held
    for (const wake of this.room.splice(0)) wake()
  }
}
