import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { type Snapshot, validateSnapshot } from '../../objects/Snapshot.js'
import { type Chunks, validateChunks } from '../../objects/Chunks.js'
import { type Tree, validateTree } from '../../objects/Tree.js'

/** Read and validate a tree: a hostile or malformed one throws (exit 5) here, before any use. */
export async function readTree(store: Store, digest: Digest): Promise<Tree> {
  return validateTree(await store.readObject(digest, 'tree'), `tree ${digest}`)
}

export async function readChunks(store: Store, digest: Digest): Promise<Chunks> {
  return validateChunks(await store.readObject(digest, 'chunks'), `chunks ${digest}`)
}

export async function readSnapshot(store: Store, digest: Digest): Promise<Snapshot> {
  return validateSnapshot(await store.readObject(digest, 'snapshot'), `snapshot ${digest}`)
}
