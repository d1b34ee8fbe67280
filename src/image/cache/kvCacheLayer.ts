import { createReadStream, statSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { InputNotFoundError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import { type KvCacheLayer, validateKvCacheLayer } from '../../objects/KvCacheLayer.js'
import type { Store } from '../../store/Store.js'
import { chunkedFile, readRange, storePieces } from '../storedPieces.js'
import { type ChunkerOptions, chunkBuffer } from '../../world/scan/fastcdc.js'

/**
 * The state's pieces are content-defined, about two tokens' worth of cells each (a power of
 * two, 8 KiB at least): llama.cpp writes each layer's cells in order, so a grown
 * conversation's state keeps runs of the old one, and a piece that holds an end of a run
 * is new. Measured on the tests' model (527 bytes a token) a state of 990 tokens shares
 * 80% of its bytes with the state of its first 900 at 8 KiB, 47% at 16 KiB; on the
 * benchmark's (8,200 bytes a token), 16 KiB pieces read a 9 MB state in 11-12 ms against
 * 15-29 ms at 8 KiB, sharing 89% against 90%. A model's bytes per token are the same at
 * every length, so two states of one conversation are cut alike.
 */
export function stateChunking(stateBytes: number, tokens: number): ChunkerOptions {
  const perToken = stateBytes / Math.max(1, tokens)
  const avgSize = Math.min(MAX_STATE_PIECE, Math.max(MIN_STATE_PIECE, 2 ** Math.floor(Math.log2(2 * perToken))))
  return { minSize: avgSize / 4, avgSize, maxSize: avgSize * 8 }
}
const MIN_STATE_PIECE = 8192
const MAX_STATE_PIECE = 1 << 20

/** Store a state file's bytes as pieces; the new bytes (pieces the store lacked) are counted. */
export async function storeState(store: Store, bytes: Buffer, tokens: number): Promise<{ digest: Digest; newBytes: number }> {
  return storePieces(store, chunkBuffer(bytes, stateChunking(bytes.length, tokens)))
}

/** A state's bytes, every piece checked against its digest and size as it is read (a changed one throws DigestMismatchError, exit 5). */
export async function readState(store: Store, digest: Digest): Promise<Buffer> {
  const { pieces, size } = await chunkedFile(store, digest)
  return readRange(store, pieces, 0, size)
}

/** The cache layer object `digest` names (MalformedObjectError, exit 5, when it is something else). */
export async function readKvCacheLayer(store: Store, digest: Digest): Promise<KvCacheLayer> {
  return validateKvCacheLayer(await store.readObject(digest), `cache layer ${digest}`)
}

const modelDigests = new Map<string, Promise<string>>()

/** A model file's sha256 (hex), computed once per process while the file stays the same (path, size, mtime, inode). */
export function modelSha256(path: string): Promise<string> {
  const st = statSync(path, { throwIfNoEntry: false })
  if (!st?.isFile()) return Promise.reject(new InputNotFoundError(`model file ${path} does not exist`, { path }))
  const key = `${path}\0${st.size}\0${st.mtimeMs}\0${st.ino}`
  let digest = modelDigests.get(key)
  if (!digest) {
    digest = new Promise<string>((resolve, reject) => {
      const hash = createHash('sha256')
      createReadStream(path)
        .on('data', (b) => hash.update(b))
        .on('error', reject)
        .on('end', () => resolve(hash.digest('hex')))
    })
    modelDigests.set(key, digest)
    digest.catch(() => modelDigests.delete(key)) // a failed read is not remembered
  }
  return digest
}
