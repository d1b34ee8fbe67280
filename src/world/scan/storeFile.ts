import { createReadStream, readFileSync } from 'node:fs'
import { canonicalBytes } from '../../util/canonicalJson.js'
import { type Digest, sha256 } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import type { ObjectSink } from '../../store/LocalPackWriter.js'
import { chunkStream } from './fastcdc.js'
import { fsPath } from '../../util/fsName.js'
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
  for await (const chunk of chunkStream(createReadStream(fsPath(path), { highWaterMark: 4 * 1024 * 1024 }))) {
    const blob = sha256(chunk)
    if (write) await store.writeVerified(blob, chunk)
    chunks.push({ blob, size: chunk.length })
    total += chunk.length
  }
  const object: Chunks = { kind: 'chunks', schemaVersion: 1, size: total, chunks }
  const bytes = canonicalBytes(object)
  const content = sha256(bytes)
  if (write) await store.writeVerified(content, bytes)
  return { content, chunked: true, size: total }
}

/** One blob, synchronously: for a small file the system calls cost less than handing them to the thread pool. */
export function storeSmallFile({ store, path, write }: { store: ObjectSink; path: string; write: boolean }): StoredContent {
  const bytes = readFileSync(fsPath(path))
  const content = sha256(bytes)
  if (write) store.writeVerifiedSync(content, bytes)
  return { content, chunked: false, size: bytes.length }
}
