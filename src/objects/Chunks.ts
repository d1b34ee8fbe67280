import { MalformedObjectError } from '../errors/index.js'
import { type Digest, isDigest } from './digest.js'

/**
 * The chunks of one file, in order: content-defined for a large workspace file, fixed for a
 * machine's memory and disk, a tensor's pieces for a model. Its edges are its chunks'
 * blobs, every digest in it (generic, edges.ts).
 */
export interface Chunks {
  kind: 'chunks'
  schemaVersion: 1
  size: number
  chunks: Array<{ blob: Digest; size: number }>
}

/**
 * Check a parsed `chunks` object: each chunk a digest and a positive size, adding up to a
 * size that is a safe integer (so no sum on the way lost precision); MalformedObjectError
 * (exit 5) if not. Hand-written, not a zod schema: a machine's memory is a list of 16,384
 * chunks a GiB, and zod took 1.5 to 2.5 times as long as this check on 262,144.
 */
export function validateChunks(value: unknown, where: string): Chunks {
  const c = value as Chunks | null
  const ok =
    c?.kind === 'chunks' &&
    c.schemaVersion === 1 &&
    Number.isSafeInteger(c.size) &&
    Array.isArray(c.chunks) &&
    c.chunks.every((p) => isDigest(p?.blob) && Number.isSafeInteger(p.size) && p.size > 0) &&
    c.chunks.reduce((n, p) => n + p.size, 0) === c.size
  if (!ok) throw new MalformedObjectError(`${where} is not a valid chunks object`)
  return c
}
