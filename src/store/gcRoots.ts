import type { Digest } from '../objects/digest.js'
import { isLive, listReflogs, readReflog } from './reflog.js'
import { listRefs, readRef } from './refs.js'
import type { Store } from './Store.js'

/** What keeps objects alive: every ref, HEAD, and every id a reflog entry not older than `cutoff` recorded (null: every entry). */
export async function gcRoots(store: Store, cutoff: Date | null = null): Promise<Set<Digest>> {
  const roots = new Set<Digest>()
  for (const ref of await listRefs(store)) roots.add(ref.id)
  const head = await readRef(store, 'HEAD').catch(() => null)
  if (head) roots.add(head)
  for (const log of await listReflogs(store)) {
    for (const entry of await readReflog(store, log)) {
      if (!isLive(entry, cutoff)) continue
      roots.add(entry.new)
      if (entry.old) roots.add(entry.old)
    }
  }
  return roots
}
