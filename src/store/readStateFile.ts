import { closeSync, fstatSync } from 'node:fs'
import { StoreCorruptError } from '../errors/index.js'
import { readIntoSync } from '../util/fsx.js'
import { notRegular, openStoreFileSync } from './readObjectBytes.js'

/**
 * The largest state file a store holds that is read whole (refs, HEAD, reflogs, journals, records, the workspace
 * index): the index of a million-file workspace is about 100 MiB. A larger one is damage, refused before anything
 * is allocated.
 */
export const MAX_STATE_FILE_BYTES = 256 * 1024 * 1024

/**
 * A store state file's bytes, or null when there is none. Opened as object files are (`openStoreFileSync`: never
 * through a symlink, never waiting on a FIFO): a store may come from elsewhere, and a ref linked to `/dev/zero` or a
 * FIFO in place of HEAD would read until memory ends or wait forever. StoreCorruptError (exit 5) for anything but a
 * regular file of at most `maxBytes`.
 */
export function readStateOrNull(path: string, maxBytes = MAX_STATE_FILE_BYTES): Buffer | null {
  const fd = openStoreFileSync(path)
  if (fd === null) return null
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw notRegular(path)
    if (stat.size > maxBytes) throw new StoreCorruptError(`${path} is ${stat.size} bytes, more than a store's state file holds (${maxBytes}): refusing to read it`, { path })
    return readIntoSync(fd, Buffer.allocUnsafe(stat.size))
  } finally {
    closeSync(fd)
  }
}

/** `readStateOrNull` as UTF-8 text. */
export function readStateTextOrNull(path: string): string | null {
  return readStateOrNull(path)?.toString('utf8') ?? null
}
