import type { Digest } from '../store/digest.js'
import { readShallow, updateShallow } from '../store/shallow.js'
import type { Store } from '../store/Store.js'
import type { Snapshot } from '../world/Snapshot.js'

/** The store's shallow snapshots an incoming image does not cut: the image brings their parents. */
export async function shallowToDeepen(store: Store, imageShallow: Digest[]): Promise<Set<Digest>> {
  const deepen = await readShallow(store)
  for (const s of imageShallow) deepen.delete(s)
  return deepen
}

/** After an image came in: its cut snapshots become shallow, and snapshots whose parents it brought stop being so. */
export async function recordShallow(store: Store, imageShallow: Digest[], deepen: ReadonlySet<Digest>): Promise<void> {
  const complete: Digest[] = []
  for (const s of deepen) {
    if (!(await store.has(s))) continue
    const { parents } = await store.readObject<Snapshot>(s, 'snapshot')
    if ((await Promise.all(parents.map((p) => store.has(p)))).every(Boolean)) complete.push(s)
  }
  await updateShallow(store, { add: imageShallow, remove: complete })
}
