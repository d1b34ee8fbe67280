import type { Digest } from '../objects/digest.js'
import { parseStructured, type Store } from '../store/Store.js'
import { assertLayerKinds } from '../world/tree/layerKinds.js'
import { readSnapshot } from '../world/tree/readObjects.js'
import type { Snapshot } from '../objects/Snapshot.js'

/** A snapshot read for use as an image: well-formed, and each layer pointing at an object of its kind (exit 5 otherwise). */
export async function readImage(store: Store, id: Digest): Promise<Snapshot> {
  const snapshot = await readSnapshot(store, id)
  await assertLayerKinds(snapshot, `snapshot ${id}`, (digest) => storedKind(store, digest))
  return snapshot
}

/** The kind of a stored object (digest-verified): `'blob'` for raw bytes, null when it is not in the store. */
export async function storedKind(store: Store, digest: Digest): Promise<string | null> {
  if (!(await store.has(digest))) return null
  const bytes = await store.readBlob(digest)
  if (bytes[0] !== 0x7b) return 'blob'
  try {
    return parseStructured(bytes, digest).kind
  } catch {
    return 'blob'
  }
}
