import type { BigIntStats } from 'node:fs'
import { atomicWrite } from '../util/atomicWrite.js'

/**
 * What ties a store file to the very file this machine wrote: its inode number and birth time, which the writer
 * reads from the file it just created and puts in it. A cloned repository carrying `.forkpoint/`, a `git pull` into
 * an ignored one, or a copy makes a new file with another inode and birth time, which its author cannot know in
 * advance; so a file whose mark does not match its own is data from elsewhere, however well formed. Where the file
 * system keeps no birth time (it reads 0), the inode number alone marks the file.
 */
export const hereMark = (stat: BigIntStats): string => `${stat.ino}:${stat.birthtimeNs}`

/** The field of a JSON state file that holds its mark. */
export const MARK_FIELD = 'writtenAs'

/** Why a state file whose mark does not match is refused, for error messages. */
export const NOT_WRITTEN_HERE = 'it was not written here (a copy, or a file a cloned repository carries)'

/** Write JSON state `value` atomically (`atomicWrite`), marked as the file written here; `readMarkedStateOrNull` reads it back. */
export async function writeMarkedState(path: string, value: object, opts: { fsync?: boolean } = {}): Promise<void> {
  await atomicWrite(path, (file) => JSON.stringify({ ...value, [MARK_FIELD]: hereMark(file) }), opts)
}
