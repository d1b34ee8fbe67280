import { availableParallelism } from 'node:os'
import type { Worker } from 'node:worker_threads'
import { InternalError } from '../../errors/index.js'
import type { ObjectSink } from '../../store/LocalPackWriter.js'
import type { Store } from '../../store/Store.js'
import { startBuiltWorker } from '../../util/builtEntry.js'
import { storeSmallFile } from './storeFile.js'

/**
 * When a second thread pays: with enough bytes per file that hashing, not the kernel's
 * file creation, is the work. Measured once with a throwaway script (2 cores, ext4): 300
 * files of 1 MB, 620 -> 430 ms; 2,000 of 100 kB, within noise; 10,000 of 10 kB, slower
 * (creating inodes contends in the kernel, and system time doubles).
 */
const WORKER_MIN_BYTES = 32 * 1024 * 1024
const WORKER_MIN_AVERAGE = 256 * 1024

/** Work shared between the threads: the next file to take, and per file its digest (32 raw bytes) and size. */
export interface SharedHashes {
  next: Int32Array
  digests: Uint8Array
  sizes: Float64Array
}

export interface HashFilesArgs {
  store: Store
  paths: string[]
  /** The files' total size, as scanned. */
  bytes: number
  /** Store each file as a blob, or only hash it. */
  write: boolean
  /** Where the blobs go when not into the store's own files (a pack): all from this thread then. */
  sink?: ObjectSink | undefined
  onProgress?: (done: number, total: number) => void
}

/**
 * Hash (and store) small files, one blob each, on two threads when that pays: each thread takes the next file from a shared counter, so a few large files
 * never leave one thread idle. The worker hands back what it wrote, for the caller's one sync.
 */
export async function hashSmallFiles({ store, paths, bytes, write, sink, onProgress }: HashFilesArgs): Promise<SharedHashes> {
  const shared: SharedHashes = {
    next: new Int32Array(new SharedArrayBuffer(4)),
    digests: new Uint8Array(new SharedArrayBuffer(paths.length * 32)),
    sizes: new Float64Array(new SharedArrayBuffer(paths.length * 8)),
  }
  const helper = sink === undefined && helperPays(paths.length, bytes) ? startHelper(store, paths, write, shared) : null
  try {
    hashShare(sink ?? store, paths, write, shared, onProgress)
  } catch (err) {
    await helper?.worker.terminate()
    throw err
  }
  await helper?.finished
  onProgress?.(paths.length, paths.length)
  return shared
}

/** Whether hashing `files` files of `bytes` in all pays a second thread (see WORKER_MIN_BYTES). */
export function helperPays(files: number, bytes: number): boolean {
  return bytes >= WORKER_MIN_BYTES && bytes >= WORKER_MIN_AVERAGE * files && availableParallelism() > 1
}

/** This thread's share: files from the shared counter until none is left. */
export function hashShare(store: ObjectSink, paths: string[], write: boolean, shared: SharedHashes, onProgress?: (done: number, total: number) => void): void {
  const digests = Buffer.from(shared.digests.buffer)
  for (let i = Atomics.add(shared.next, 0, 1); i < paths.length; i = Atomics.add(shared.next, 0, 1)) {
    const stored = storeSmallFile({ store, path: paths[i]!, write })
    digests.write(stored.content.slice(7), i * 32, 32, 'hex')
    shared.sizes[i] = stored.size
    onProgress?.(Math.min(i + 1, paths.length), paths.length)
  }
}

/** What the worker reports: done, or the error that stopped it (rethrown here as the same kind). */
export type HelperReport = { ok: true; written: string[] } | { ok: false; message: string; code?: string }

function startHelper(store: Store, paths: string[], write: boolean, shared: SharedHashes): { worker: Worker; finished: Promise<void> } | null {
  let worker: Worker
  try {
    worker = startBuiltWorker('world/scan', 'hashWorker.js', { storeRoot: store.root, paths, write, shared })
  } catch {
    return null // running from unbuilt sources: one thread does it all, as correctly
  }
  const finished = new Promise<void>((resolve, reject) => {
    worker.once('message', (report: HelperReport) => {
      if (!report.ok) return reject(Object.assign(new Error(report.message), { code: report.code }))
      store.adoptUnsynced(report.written)
      resolve()
    })
    worker.once('error', reject)
    worker.once('exit', (code) => reject(new InternalError(`the hashing thread exited (${code}) before reporting`)))
  })
  return { worker, finished }
}
