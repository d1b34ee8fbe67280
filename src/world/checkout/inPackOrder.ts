import type { Store } from '../../store/Store.js'
import type { FileEntry } from '../../objects/Tree.js'

/**
 * Files to write, those whose objects are packed in their packs' order (after the
 * others): the store decompresses a packed object's whole frame and keeps only the last
 * few, so writing a pack's files in any other order decompresses each frame once per
 * file in it. Unchanged when the store keeps no pack.
 */
export function inPackOrder<T>(store: Store, items: T[], entryOf: (item: T) => FileEntry): T[] {
  if (items.length < 2) return items // nothing to order (a clone's checkout wrote its files as they came): the packs are not looked at
  const packs = store.packs.list()
  if (packs.length === 0) return items
  const rank = new Map(packs.map((pack, i) => [pack.digest, i]))
  const placed = items.map((item) => {
    const entry = entryOf(item)
    const at = 'blob' in entry ? store.packs.locate(entry.blob, 'read-once') : undefined
    return { item, pack: at ? rank.get(at.pack.digest)! : -1, offset: at?.object.offset ?? 0 }
  })
  // numbers, not strings to compare: 100k keys sorted as text took 270 ms of a clone
  return placed.sort((a, b) => a.pack - b.pack || a.offset - b.offset).map(({ item }) => item)
}
