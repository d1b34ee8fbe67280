import { closeSync, fstatSync, openSync, promises as fs } from 'node:fs'
import { UnsupportedFileError } from '../../errors/index.js'
import { canonicalBytes } from '../../util/canonicalJson.js'
import { type Digest, sha256 } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import type { ObjectSink } from '../../store/LocalPackWriter.js'
import { chunkStream } from './fastcdc.js'
import { fsPath } from '../../util/fsName.js'
import { errnoCode, readIntoSync } from '../../util/fsx.js'
import { UNTRUSTED_READ } from '../../util/untrustedRead.js'
import type { Chunks } from '../../objects/Chunks.js'

/** Files this large or larger are stored as content-defined chunks. */
export const CHUNKING_THRESHOLD = 8 * 1024 * 1024

export interface StoredContent {
  /** A blob digest, or the digest of a `chunks` object for a chunked file. */
  content: Digest
  chunked: boolean
  size: number
}

/**
 * Hash one file (and store it when `write`): small files as one blob, large ones as
 * FastCDC chunks plus a `chunks` object, so versions of a big file share storage.
 * With `write: false` nothing is stored; the digest is the same as if it were.
 */
export async function storeFile({ store, path, size, write }: { store: Store; path: string; size: number; write: boolean }): Promise<StoredContent> {
  if (size < CHUNKING_THRESHOLD) return storeSmallFile({ store, path, write })
  const chunks: Chunks['chunks'] = []
  let total = 0
  const handle = await fs.open(fsPath(path), UNTRUSTED_READ).catch((err: unknown) => Promise.reject(changedUnderScan(path, err)))
  try {
    if (!(await handle.stat()).isFile()) throw changedUnderScan(path)
    for await (const chunk of chunkStream(handle.createReadStream({ highWaterMark: 4 * 1024 * 1024, autoClose: false }))) {
      const blob = sha256(chunk)
      if (write) await store.writeVerified(blob, chunk)
      chunks.push({ blob, size: chunk.length })
      total += chunk.length
    }
  } finally {
    await handle.close()
  }
  const object: Chunks = { kind: 'chunks', schemaVersion: 1, size: total, chunks }
  const bytes = canonicalBytes(object)
  const content = sha256(bytes)
  if (write) await store.writeVerified(content, bytes)
  return { content, chunked: true, size: total }
}

/** One blob, synchronously: for a small file the system calls cost less than handing them to the thread pool. */
export function storeSmallFile({ store, path, write }: { store: ObjectSink; path: string; write: boolean }): StoredContent {
  const bytes = readRegularSync(path)
  const content = sha256(bytes)
  if (write) store.writeVerifiedSync(content, bytes)
  return { content, chunked: false, size: bytes.length }
}

/**
 * A file the scan found regular, read whole. Opened as `UNTRUSTED_READ`: a sandboxed command writing to the workspace
 * may have swapped it for a FIFO (an open would wait forever) or a symlink since the scan looked.
 */
function readRegularSync(path: string): Buffer {
  let fd: number
  try {
    fd = openSync(fsPath(path), UNTRUSTED_READ)
  } catch (err) {
    throw changedUnderScan(path, err)
  }
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw changedUnderScan(path)
    return readIntoSync(fd, Buffer.allocUnsafe(stat.size))
  } finally {
    closeSync(fd)
  }
}

/** A file that is gone or no longer a regular file when the scan comes to read it (exit 5); any other failure as it is. */
function changedUnderScan(path: string, cause?: unknown): Error {
  const code = cause === undefined ? 'ENOTREG' : errnoCode(cause)
  if (!['ENOENT', 'ENOTDIR', 'ELOOP', 'ENOTREG'].includes(code ?? '')) return cause as Error
  return new UnsupportedFileError(
    `${path} changed while the workspace was scanned: it is ${code === 'ELOOP' || code === 'ENOTREG' ? 'no longer a regular file' : 'gone'}; snapshot again once nothing writes to it`,
    { path },
  )
}
