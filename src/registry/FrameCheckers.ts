import type { Worker } from 'node:worker_threads'
import type { Digest } from '../store/digest.js'
import { startBuiltWorker } from '../util/builtEntry.js'

/** A frame to check: its compressed bytes (moved to the thread), declared size, and objects `[digest, offset in the frame, size]`. */
export interface CheckFrame {
  type: 'check'
  id: number
  compressed: ArrayBuffer
  size: number
  objects: Array<[Digest, number, number]>
}

/** Files to fill from a checked frame: `[object's place in the frame's list, path (bytes for a name that is not UTF-8), mode]`; none frees the frame. */
export interface WriteFrame {
  type: 'write'
  id: number
  writes: Array<[number, string | Uint8Array, number]>
}

export type FrameFailure =
  { kind: 'frame'; message: string } | { kind: 'digest'; message: string; digest: Digest; actual: Digest } | { kind: 'write'; message: string; code: string | null; path: string }

/** What a thread reported of a frame, for the caller to name (it knows the pack). */
export class FrameFailed extends Error {
  constructor(readonly failure: FrameFailure) {
    super(failure.message)
  }
}

export interface CheckReply {
  id: number
  failure: FrameFailure | null
  /** Objects that look structured (`{"`), by place in the frame's list, copied out. */
  structured?: Array<[number, Uint8Array]>
}

export interface WriteReply {
  id: number
  failure: FrameFailure | null
}

/** A frame checked on a thread, held there until `write` or `release`. */
export interface CheckedFrame {
  readonly id: number
  readonly thread: number
  readonly size: number
  structured: Array<[number, Uint8Array]>
}

/**
 * Decompressed bytes the threads may hold (frames checked or waiting for it), beyond one
 * frame: enough that the download never waits on them for long (held back by a few
 * frames, as first built, a clone's pull went at a third of the network's speed, the
 * connection stopping and starting), few enough to bound memory.
 */
const HELD_BYTES = 64 * 1024 * 1024

interface Thread {
  worker: Worker
  /** Frames it holds. */
  held: number
}

/**
 * Threads that decompress and check a pack's frames and write the files their blobs
 * fill, so that the thread reading the pack does only that: a clone's main thread had
 * been its limit (decompressing, hashing, and a promise chain per object). A frame stays
 * held on its thread from `check` until `write` (which frees it), and `ready` waits while
 * the threads hold HELD_BYTES, so the reader holds back the download. A frame's failure
 * comes back as `FrameFailed` for the caller to name (it knows the pack). Writes go on
 * while the caller does other things (a clone checks the image meanwhile); `settle`
 * waits for them. `close` stops the threads at once, writing or not.
 */
export class FrameCheckers {
  private readonly threads: Thread[]
  private readonly replies = new Map<number, { resolve: (reply: CheckReply | WriteReply) => void; reject: (err: Error) => void }>()
  private nextId = 0
  private heldBytes = 0
  private readonly writing = new Set<Promise<unknown>>()
  private room: Array<() => void> = []
  private broken: Error | null = null

  constructor(count: number) {
    this.threads = Array.from({ length: count }, () => {
      const thread: Thread = { worker: startBuiltWorker('registry', 'frameCheckWorker.js'), held: 0 }
      thread.worker.on('message', (reply: CheckReply | WriteReply) => this.answered(reply))
      thread.worker.on('error', (err) => this.fail(err))
      return thread
    })
  }

  /** Wait until the threads can take a frame of `size` bytes. */
  async ready(size: number): Promise<void> {
    while (this.heldBytes > 0 && this.heldBytes + size > HELD_BYTES && this.broken === null) await new Promise<void>((resolve) => this.room.push(resolve))
    if (this.broken !== null) throw this.broken
  }

  /** Check a frame on the least busy thread (call `ready` first); resolves with its structured objects, or rejects with the frame's failure (`FrameFailed`). */
  async check(compressed: Buffer, size: number, objects: Array<[Digest, number, number]>): Promise<CheckedFrame> {
    const thread = this.threads.reduce((best, t, i) => (t.held < this.threads[best]!.held ? i : best), 0)
    this.threads[thread]!.held++
    this.heldBytes += size
    const id = this.nextId++
    const owned = compressed.byteOffset === 0 && compressed.byteLength === compressed.buffer.byteLength ? compressed : Buffer.from(compressed) // only a whole ArrayBuffer can move
    const reply = (await this.ask(thread, { type: 'check', id, compressed: owned.buffer as ArrayBuffer, size, objects }, [owned.buffer as ArrayBuffer])) as CheckReply
    if (reply.failure !== null) {
      this.free(thread, size)
      throw new FrameFailed(reply.failure)
    }
    return { id, thread, size, structured: reply.structured ?? [] }
  }

  /**
   * Fill files from a checked frame, then free it, without waiting: `settle` waits for
   * every write. A write that fails breaks the checkers: every question after it, and
   * `settle`, get its error (an Error with the failing call's `code` and `path`).
   */
  write(frame: CheckedFrame, writes: WriteFrame['writes']): void {
    const written: Promise<void> = this.ask(frame.thread, { type: 'write', id: frame.id, writes }).then(
      (reply) => {
        this.free(frame.thread, frame.size)
        if (reply.failure?.kind === 'write') this.fail(Object.assign(new Error(reply.failure.message), { code: reply.failure.code ?? undefined, path: reply.failure.path }))
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

  async close(): Promise<void> {
    this.fail(new Error('the frame checkers were closed'))
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

  private free(thread: number, size: number): void {
    this.threads[thread]!.held--
    this.heldBytes -= size
    for (const wake of this.room.splice(0)) wake()
  }

  /** A thread that died (or `close`): every question waiting, and every later one, gets the error. */
  private fail(err: Error): void {
    this.broken ??= err
    for (const { reject } of this.replies.values()) reject(err)
    this.replies.clear()
    for (const wake of this.room.splice(0)) wake()
  }
}
