import { promises as fs } from 'node:fs'
import { atomicWrite } from '../util/atomicWrite.js'
import { readStateTextOrNull } from './readStateFile.js'
import { type Digest, isDigest } from '../objects/digest.js'
import type { Store } from './Store.js'

/**
 * The store's `shallow` file: snapshots whose parents the store does not hold because
 * they came in a shallow image (`push --depth`), one id a line, as git's `.git/shallow`.
 * A walk of the object graph follows these snapshots' parents where the store has them
 * (a later, deeper pull may bring them) and does not call them missing where it does not.
 */
export async function readShallow(store: Store): Promise<Set<Digest>> {
  const text = readStateTextOrNull(store.path('shallow'))
  return new Set((text ?? '').split('\n').filter((line): line is Digest => isDigest(line)))
}

/** Record snapshots that came without their parents, and forget ones whose parents came since (call under the store's write lock). */
export async function updateShallow(store: Store, { add = [], remove = [] }: { add?: Iterable<Digest>; remove?: Iterable<Digest> }): Promise<void> {
  const all = await readShallow(store)
  const before = [...all].sort().join()
  for (const s of add) all.add(s)
  for (const s of remove) all.delete(s)
  const after = [...all].sort()
  if (after.join() === before) return
  if (after.length === 0) await fs.rm(store.path('shallow'), { force: true })
  else await atomicWrite(store.path('shallow'), after.map((d) => `${d}\n`).join(''), { fsync: true })
}
