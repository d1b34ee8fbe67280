import { closeSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs'
import { type Digest, sha256 } from '../objects/digest.js'
import type { Store } from '../store/Store.js'
import { chunkedFile, readRange, storePieces } from '../image/storedPieces.js'

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
  try {
    return await storePieces(store, fixedPieces(fd), (piece) => (piece.length === MACHINE_PIECE && ZERO_PIECE.equals(piece) ? ZERO_PIECE_DIGEST : undefined))
  } finally {
    closeSync(fd)
  }
}

/** A file's pieces of `MACHINE_PIECE` bytes, read into one buffer in turn (each is stored before the next is read). */
function* fixedPieces(fd: number): Iterable<Buffer> {
  const buffer = Buffer.alloc(MACHINE_PIECE)
  for (let read = readSync(fd, buffer, 0, MACHINE_PIECE, null); read > 0; read = readSync(fd, buffer, 0, MACHINE_PIECE, null)) yield buffer.subarray(0, read)
}

/**
 * Write a stored file back, sparse: zero pieces are left as holes, so a 1 GiB memory
 * image of a guest that touched 40 MB costs 40 MB of disk. Every other piece is checked
 * against its digest as it is read (DigestMismatchError, exit 5), before a byte is written.
 */
export async function writeFilePieces(store: Store, digest: Digest, path: string, expectedSize?: number): Promise<void> {
  const { pieces, size } = await chunkedFile(store, digest, expectedSize)
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
