import { MalformedObjectError } from '../errors/index.js'
import { type Digest, sha256 } from '../objects/digest.js'
import { type Store, verified } from '../store/Store.js'
import { canonicalBytes } from '../util/canonicalJson.js'
import { readChunks } from '../world/tree/readObjects.js'
import type { Chunks } from '../objects/Chunks.js'
import type { FileEntry } from '../objects/Tree.js'

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

/**
 * Store a file's pieces as a `chunks` object; `knownDigest` may name a piece without
 * hashing it (a piece of zeros). Returns the object, the file's size, and the bytes of the
 * pieces the store lacked (what a second version of a file added).
 */
export async function storePieces(
  store: Store,
  pieces: Iterable<Uint8Array>,
  knownDigest: (piece: Uint8Array) => Digest | undefined = () => undefined,
): Promise<{ digest: Digest; size: number; newBytes: number }> {
  const chunks: Chunks['chunks'] = []
  let [size, newBytes] = [0, 0]
  for (const bytes of pieces) {
    const blob = knownDigest(bytes) ?? sha256(bytes)
    if (!(await store.has(blob))) {
      store.writeVerifiedSync(blob, bytes)
      newBytes += bytes.length
    }
    chunks.push({ blob, size: bytes.length })
    size += bytes.length
  }
  const object: Chunks = { kind: 'chunks', schemaVersion: 1, size, chunks }
  return { digest: await store.writeBlob(canonicalBytes(object)), size, newBytes }
}

/** A `chunks` object's pieces and size (read checked: they add up), and its size `expectedSize` when given: MalformedObjectError (exit 5) if not. */
export async function chunkedFile(store: Store, digest: Digest, expectedSize?: number): Promise<{ pieces: Piece[]; size: number }> {
  const { chunks, size } = await readChunks(store, digest)
  if (expectedSize !== undefined && size !== expectedSize)
    throw new MalformedObjectError(`stored file ${digest}: its pieces do not add up to its ${expectedSize} bytes`, { digest })
  return { pieces: piecesOf(chunks), size }
}
