import type { Store } from '../store/Store.js'
import type { FileEntry } from './Tree.js'

/**
 * Files to write, those whose objects are packed in their packs' order (after the
 * others): the store decompresses a packed object's whole frame and keeps only the last
 * few, so writing a pack's files in any other order decompresses each frame once per
 * file in it. Unchanged when the store keeps no pack.
 */
export function inPackOrder<T>(store: Store, items: T[], entryOf: (item: T) => FileEntry): T[] {
  if (store.packs.list().length === 0) return items
  const place = (item: T) => {
    const entry = entryOf(item)
    const at = 'blob' in entry ? store.packs.peek(entry.blob) : undefined
    return at ? `${at.pack.digest}:${String(at.object.offset).padStart(16, '0')}` : ''
  }
  const keyed = items.map((item) => ({ item, key: place(item) }))
  return keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map(({ item }) => item)
}
