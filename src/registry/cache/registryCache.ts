import { promises as fs } from 'node:fs'
import { dirname } from 'node:path'
import { type Digest, digestHex, sha256 } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { atomicWrite } from '../../util/atomicWrite.js'
import { readStateOrNull } from '../../store/readStateFile.js'

/**
 * The store's `tmp/registry-cache/`: immutable registry blobs seen before (segment
 * manifests, pack indexes), kept by digest so that later pushes and pulls need not fetch
 * them, and what the store knows each remote tag holds (knownRemoteImage); gc expires it
 * with the rest of tmp/.
 */
export const cachePath = (store: Store, name: string): string => store.path('tmp', 'registry-cache', name)

/** Write (or replace) a file of the cache. */
export async function writeCached(store: Store, name: string, bytes: Buffer): Promise<void> {
  const path = cachePath(store, name)
  await fs.mkdir(dirname(path), { recursive: true })
  await atomicWrite(path, bytes)
}

/** A cached blob's bytes, or null when it is not cached (or no longer hashes to its digest). */
export async function cachedBlob(store: Store, digest: Digest): Promise<Buffer | null> {
  const bytes = readStateOrNull(cachePath(store, digestHex(digest)))
  return bytes && sha256(bytes) === digest ? bytes : null
}

/** Keep a blob we built or verified. */
export async function rememberBlob(store: Store, digest: Digest, bytes: Buffer): Promise<void> {
  await writeCached(store, digestHex(digest), bytes)
}
