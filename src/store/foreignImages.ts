import { atomicWrite } from '../util/atomicWrite.js'
import { readStateTextOrNull } from './readStateFile.js'
import { type Digest, isDigest } from '../objects/digest.js'
import type { Store } from './Store.js'

/**
 * The store's `foreign` file: the images that arrived from another store (by pull, clone
 * or unpack), one id a line. Their history came with them, so an image is foreign when it
 * is one of these or an ancestor of one (`cameFromElsewhere`). Only this store's own pull,
 * clone and unpack write it.
 */
export async function readForeignImages(store: Store): Promise<Set<Digest>> {
  const text = readStateTextOrNull(store.path('foreign'))
  return new Set((text ?? '').split('\n').filter((line): line is Digest => isDigest(line)))
}

/** Record an image that came from elsewhere (call under the store's write lock). */
export async function recordForeignImage(store: Store, id: Digest): Promise<void> {
  const all = await readForeignImages(store)
  if (all.has(id)) return
  all.add(id)
  await atomicWrite(store.path('foreign'), [...all].map((d) => `${d}\n`).join(''), { fsync: true })
}
