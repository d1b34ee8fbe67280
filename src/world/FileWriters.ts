import type { Worker } from 'node:worker_threads'
import { builtEntry } from '../util/builtEntry.js'
import { requirePackage } from '../util/requirePackage.js'

/** Files sent to a writer thread at once: their contents one after another in `bytes` (moved, not copied, to the thread). */
export interface WriteBatch {
  id: number
  bytes: ArrayBuffer
  /** A path as `fsPath` gives it: bytes for a name that is not UTF-8. */
  files: Array<{ path: string | Uint8Array; mode: number; size: number }>
}

export interface WriteReply {
  id: number
  failure: { path: string; code: string | null; message: string } | null
}

/** A batch is sent once it holds this many files or bytes. */
const BATCH_FILES = 64
const BATCH_BYTES = 1024 * 1024
/** Batches under way per thread: enough that a thread never waits for the next. */
const BATCHES_IN_FLIGHT = 4

/**
 * New files written on threads of their own, synchronously, in batches: a clone writes
 * thousands of files while its main thread decompresses and checks the objects, and each
 * asynchronous system call costs that thread a trip through the thread pool (four a
 * file: open, write, fchmod, close), more than the writing costs the thread that does it.
 * `write` holds the caller back while enough batches are under way; `settle` waits for
 * all and throws the first failure (an Error with the failing call's `code` and `path`).
 * One caller at a time: a `write` or `settle` is awaited before the next.
 */
export class FileWriters {
  private readonly threads: Array<{ worker: Worker; busy: number }>
  private readonly waiting = new Map<number, { busy: number }>()
  private batch: WriteBatch['files'] = []
  private contents = Buffer.allocUnsafeSlow(BATCH_BYTES)
  private batchBytes = 0
  private nextId = 0
  private failure: Error | null = null
  private room: (() => void) | null = null

  constructor(threads: number) {
    const { Worker } = requirePackage('node:worker_threads') as typeof import('node:worker_threads')
    const entry = builtEntry('world', 'fileWriterWorker.js')
    this.threads = Array.from({ length: threads }, () => {
      const thread = { worker: new Worker(entry), busy: 0 }
      thread.worker.on('message', (reply: WriteReply) => this.answered(reply))
      thread.worker.on('error', (err) => this.fail(err))
      return thread
    })
  }

  /** Write `bytes` as the new file `path` with exactly `mode`. */
  async write(path: string | Uint8Array, mode: number, bytes: Uint8Array): Promise<void> {
    this.throwIfFailed()
    if (this.batchBytes + bytes.length > this.contents.length) {
      if (this.batch.length > 0) await this.send()
      if (bytes.length > this.contents.length) this.contents = Buffer.allocUnsafeSlow(bytes.length)
    }
    this.contents.set(bytes, this.batchBytes)
    this.batch.push({ path, mode, size: bytes.length })
    this.batchBytes += bytes.length
    if (this.batch.length >= BATCH_FILES || this.batchBytes >= BATCH_BYTES) await this.send()
  }

  /** Wait for every file given so far; throw the first failure. */
  async settle(): Promise<void> {
    if (this.batch.length > 0) await this.send()
    while (this.waiting.size > 0 && this.failure === null) await new Promise<void>((resolve) => (this.room = resolve))
    this.throwIfFailed()
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map(({ worker }) => worker.terminate()))
  }

  private async send(): Promise<void> {
    while (this.threads.every((t) => t.busy >= BATCHES_IN_FLIGHT) && this.failure === null) await new Promise<void>((resolve) => (this.room = resolve))
    this.throwIfFailed()
    const thread = this.threads.reduce((a, b) => (b.busy < a.busy ? b : a))
    const batch: WriteBatch = { id: this.nextId++, bytes: this.contents.buffer, files: this.batch }
    this.batch = []
    this.contents = Buffer.allocUnsafeSlow(BATCH_BYTES)
    this.batchBytes = 0
    thread.busy++
    this.waiting.set(batch.id, thread)
    thread.worker.postMessage(batch, [batch.bytes])
  }

  private answered({ id, failure }: WriteReply): void {
    const thread = this.waiting.get(id)
    if (thread === undefined) return
    this.waiting.delete(id)
    thread.busy--
    if (failure !== null) this.fail(Object.assign(new Error(`${failure.message}`), { code: failure.code ?? undefined, path: failure.path }))
    this.wake()
  }

  private fail(err: Error): void {
    this.failure ??= err
    this.wake()
  }

  private wake(): void {
    const room = this.room
    this.room = null
    room?.()
  }

  private throwIfFailed(): void {
    if (this.failure !== null) throw this.failure
  }
}
