import { type BigIntStats, closeSync, fstatSync } from 'node:fs'
import { StoreCorruptError } from '../errors/index.js'
import { readIntoSync } from '../util/fsx.js'
import { parseJsonOrNull } from '../util/parseJsonOrNull.js'
import { notRegular, openStoreFileSync } from './readObjectBytes.js'
import { MARK_FIELD, hereMark } from './writtenHere.js'

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
  return readStateAndStatOrNull(path, maxBytes)?.bytes ?? null
}

/** `readStateOrNull` with the file's stat, as it was when read. */
export function readStateAndStatOrNull(path: string, maxBytes = MAX_STATE_FILE_BYTES): { bytes: Buffer; stat: BigIntStats } | null {
  const fd = openStoreFileSync(path)
  if (fd === null) return null
  try {
    const stat = fstatSync(fd, { bigint: true })
    if (!stat.isFile()) throw notRegular(path)
    if (stat.size > BigInt(maxBytes))
      throw new StoreCorruptError(`${path} is ${stat.size} bytes, more than a store's state file holds (${maxBytes}): refusing to read it`, { path })
    return { bytes: readIntoSync(fd, Buffer.allocUnsafe(Number(stat.size))), stat }
  } finally {
    closeSync(fd)
  }
}

/** A JSON state file written with `writeMarkedState`: its text, and its value without the mark (null when it does not parse, is not an object, or is not the file this machine wrote: `writtenHere.ts`). */
export interface MarkedState {
  text: string
  value: unknown
}

/** The marked state file at `path`, or null when there is none (see `readStateOrNull`). */
export function readMarkedStateOrNull(path: string): MarkedState | null {
  const read = readStateAndStatOrNull(path)
  if (read === null) return null
  const text = read.bytes.toString('utf8')
  const json = parseJsonOrNull(text)
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { text, value: null }
  const { [MARK_FIELD]: mark, ...value } = json as Record<string, unknown>
  return { text, value: mark === hereMark(read.stat) ? value : null }
}

/** `readStateOrNull` as UTF-8 text. */
export function readStateTextOrNull(path: string): string | null {
  return readStateOrNull(path)?.toString('utf8') ?? null
}
