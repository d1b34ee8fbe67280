import type { Digest } from '../objects/digest.js'
import { hashObjectFile, notRegular } from './readObjectBytes.js'
import { type Store, corruptObject } from './Store.js'

/** Objects found intact by this process, per store: each is hashed once however often it is linked. */
const intact = new Map<string, Set<Digest>>()

/**
 * Check an object's file against its digest by streaming it through SHA-256, for a use
 * that hands the file itself on (a hard link, a reflink clone) rather than bytes read
 * through `Store.readBlob`, which checks them itself. DESIGN.md: every read for use
 * verifies the digest.
 * @throws {DigestMismatchError} the bytes on disk changed (exit 5)
 * @throws {StoreCorruptError} the object's file is not a regular file (exit 5)
 */
export async function assertObjectIntact(store: Store, digest: Digest): Promise<void> {
  const known = intact.get(store.root) ?? new Set<Digest>()
  intact.set(store.root, known)
  if (known.has(digest)) return
  const actual = await hashObjectFile(store.objectPath(digest))
  if (actual === 'damaged') throw notRegular(store.objectPath(digest))
  if (actual !== digest) throw corruptObject(digest, actual)
  known.add(digest)
}
