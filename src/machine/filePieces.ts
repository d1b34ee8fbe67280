import { closeSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs'
import { MalformedObjectError } from '../errors/index.js'
import { type Digest, sha256 } from '../store/digest.js'
import type { Store } from '../store/Store.js'
import { canonicalBytes } from '../util/canonicalJson.js'
import type { Chunks } from '../world/Tree.js'
import { readChunks } from '../world/readObjects.js'
import { piecesOf, readRange } from '../image/storedPieces.js'

/**
 * A guest's memory and disk are stored in fixed pieces of 64 KiB, not content-defined
 * ones: a guest changes its pages in place, never shifting the rest, so a fixed grid
 * keeps every unchanged piece of two snapshots of one machine the same object, and the
 * untouched (zero) ones all one object.
 */
export const MACHINE_PIECE = 64 * 1024

const ZERO_PIECE = Buffer.alloc(MACHINE_PIECE)
export const ZERO_PIECE_DIGEST = sha256(ZERO_PIECE)

/** A file stored as pieces: the `chunks` object, its size, and the bytes of the pieces the store lacked. */
export interface StoredFile {
  digest: Digest
  size: number
  newBytes: number
}

/** Store a file (a memory image, a raw disk) as a `chunks` object of fixed pieces. */
export async function storeFilePieces(store: Store, path: string): Promise<StoredFile> {
  const fd = openSync(path, 'r')
  const chunks: Chunks['chunks'] = []
  const buffer = Buffer.alloc(MACHINE_PIECE)
  let size = 0
  let newBytes = 0
  try {
    for (let read = readSync(fd, buffer, 0, MACHINE_PIECE, null); read > 0; read = readSync(fd, buffer, 0, MACHINE_PIECE, null)) {
      const piece = buffer.subarray(0, read)
      const blob = read === MACHINE_PIECE && piece.equals(ZERO_PIECE) ? ZERO_PIECE_DIGEST : sha256(piece)
      if (store.writeVerifiedSync(blob, piece)) newBytes += read
      chunks.push({ blob, size: read })
      size += read
    }
  } finally {
    closeSync(fd)
  }
  const object: Chunks = { kind: 'chunks', schemaVersion: 1, size, chunks }
  return { digest: await store.writeBlob(canonicalBytes(object)), size, newBytes }
}

/**
 * Write a stored file back, sparse: zero pieces are left as holes, so a 1 GiB memory
 * image of a guest that touched 40 MB costs 40 MB of disk. Every other piece is checked
 * against its digest as it is read (DigestMismatchError, exit 5), before a byte is written.
 */
export async function writeFilePieces(store: Store, digest: Digest, path: string, expectedSize?: number): Promise<void> {
  const { chunks, size } = await readChunks(store, digest)
  const pieces = piecesOf(chunks)
  if (chunks.reduce((n, c) => n + c.size, 0) !== size || (expectedSize !== undefined && size !== expectedSize))
    throw new MalformedObjectError(`stored file ${digest}: its pieces do not add up to its ${expectedSize ?? size} bytes`, { digest })
  const fd = openSync(path, 'wx', 0o600)
  try {
    ftruncateSync(fd, size)
    for (const piece of pieces) {
      if (piece.blob === ZERO_PIECE_DIGEST) continue
      const bytes = readRange(store, [piece], piece.at, piece.at + piece.size)
      writeSync(fd, bytes, 0, bytes.length, piece.at)
    }
  } finally {
    closeSync(fd)
  }
}
