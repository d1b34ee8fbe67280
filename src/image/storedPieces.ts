import { MalformedObjectError } from '../errors/index.js'
import type { Digest } from '../store/digest.js'
import { type Store, verified } from '../store/Store.js'
import { readChunks } from '../world/readObjects.js'
import type { Chunks, FileEntry } from '../world/Tree.js'

/** One stored piece of a file: its object, its size and where in the file it starts. */
export interface Piece {
  blob: Digest
  size: number
  at: number
}

/** A chunk list's pieces, each with where it starts. */
export function piecesOf(chunks: Chunks['chunks']): Piece[] {
  let at = 0
  return chunks.map(({ blob, size }) => ({ blob, size, at: (at += size) - size }))
}

/** The pieces a stored file's bytes are in: its blob, or its chunks. */
export async function filePieces(store: Store, entry: FileEntry): Promise<Piece[]> {
  return 'blob' in entry ? [{ blob: entry.blob, size: entry.size, at: 0 }] : piecesOf((await readChunks(store, entry.chunks)).chunks)
}

/**
 * Bytes `begin` to `end` of a stored file, reading only the pieces that hold them, each
 * checked against its digest and its size. Synchronously: a model's pieces are a tensor
 * each (at most 4 MiB) and a KV-cache's 8 KiB or more, hundreds or thousands of them, and a
 * trip through the thread pool for each cost more than reading them (a 8 MB state: 56-86
 * ms against 16-26).
 */
export function readRange(store: Store, pieces: Piece[], begin: number, end: number): Buffer {
  const parts: Buffer[] = []
  for (const p of pieces) {
    if (p.at + p.size <= begin || p.at >= end) continue
    const bytes = verified(p.blob, store.readSizedSync(p.blob, p.size))
    if (bytes.length !== p.size) throw new MalformedObjectError(`piece ${p.blob} is ${bytes.length} bytes, not the ${p.size} its file says`, { digest: p.blob })
    parts.push(bytes.subarray(Math.max(0, begin - p.at), Math.min(p.size, end - p.at)))
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts)
}

/** The pieces that hold exactly bytes `begin` to `end`, when whole pieces do (else null). */
export function wholePieces(pieces: Piece[], begin: number, end: number): Piece[] | null {
  const inside = pieces.filter((p) => p.at >= begin && p.at + p.size <= end)
  const covered = inside.reduce((n, p) => n + p.size, 0)
  return covered === end - begin && (begin === end || inside[0]?.at === begin) ? inside : null
}
