import type { Digest } from '../../objects/digest.js'
import { readForeignImages, recordForeignImage } from '../../store/foreignImages.js'
import { storeMadeHere } from '../../store/madeHere.js'
import type { Store } from '../../store/Store.js'
import type { Snapshot } from '../../objects/Snapshot.js'

/**
 * Whether snapshot `id` came from another store: every image of a store not made where it is
 * (`storeMadeHere`: a cloned repository's `.forkpoint/`, a copy); else an image pulled, cloned
 * or unpacked here, or one of its ancestors (they came with it). Snapshots made here on top of
 * one are this store's own. Each snapshot is read once; a parent the store lacks (shallow) ends that line.
 */
export async function cameFromElsewhere(store: Store, id: Digest): Promise<boolean> {
  if (!storeMadeHere(store)) return true
  const foreign = await readForeignImages(store)
  const seen = new Set<Digest>()
  const queue = [...foreign]
  while (queue.length > 0) {
    const at = queue.pop()!
    if (at === id) return true
    if (seen.has(at) || !(await store.has(at))) continue
    seen.add(at)
    queue.push(...(await store.readObject<Snapshot>(at, 'snapshot')).parents)
  }
  return false
}

/**
 * Record `child` as from elsewhere when `parent` is: an image made here from another's world without a scan of the
 * workspace (a fork's child, a fork branch's next image, a layer appended) carries its parent's git files, which
 * must not pass as this store's own.
 */
export async function inheritElsewhere(store: Store, parent: Digest, child: Digest): Promise<void> {
  if (await cameFromElsewhere(store, parent)) await recordForeignImage(store, child)
}
