import type { Digest } from '../../objects/digest.js'
import { readShallow, updateShallow } from '../../store/shallow.js'
import type { Store } from '../../store/Store.js'
import type { Snapshot } from '../../objects/Snapshot.js'

/** The store's shallow snapshots an incoming image does not cut: the image brings their parents. */
export async function shallowToDeepen(store: Store, imageShallow: Digest[]): Promise<Set<Digest>> {
  const deepen = await readShallow(store)
  for (const s of imageShallow) deepen.delete(s)
  return deepen
}

/**
 * After an image came in: its cut snapshots whose parents the store really lacks become
 * shallow (a cut snapshot whose history the store holds is not, so an image cannot hide a
 * missing parent from `verify`), and snapshots whose parents it brought stop being so.
 */
export async function recordShallow(store: Store, imageShallow: Digest[], deepen: ReadonlySet<Digest>): Promise<void> {
  const complete: Digest[] = []
  for (const s of deepen) if ((await store.has(s)) && (await parentsPresent(store, s))) complete.push(s)
  const cut: Digest[] = []
  for (const s of imageShallow) if (!(await parentsPresent(store, s))) cut.push(s)
  await updateShallow(store, { add: cut, remove: complete })
}

async function parentsPresent(store: Store, snapshot: Digest): Promise<boolean> {
  const { parents } = await store.readObject<Snapshot>(snapshot, 'snapshot')
  return (await Promise.all(parents.map((p) => store.has(p)))).every(Boolean)
}
