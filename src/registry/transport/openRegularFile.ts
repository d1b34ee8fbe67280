import { promises as fs } from 'node:fs'
import { InvalidImageError, UnsafePathError } from '../../errors/index.js'
import { errnoCode } from '../../util/fsx.js'
import { readCapped } from './readCapped.js'
import { UNTRUSTED_READ } from '../../util/untrustedRead.js'

/**
 * Open a file of an untrusted directory (an OCI layout) for reading: never through a
 * symlink (O_NOFOLLOW: `index.json -> /dev/zero` is refused, not read forever), only a
 * regular file (O_NONBLOCK, so a FIFO cannot hang the open). Null when there is none.
 */
export async function openRegularFile(path: string): Promise<fs.FileHandle | null> {
  let handle: fs.FileHandle
  try {
    handle = await fs.open(path, UNTRUSTED_READ)
  } catch (err) {
    const code = errnoCode(err)
    if (code === 'ENOENT' || code === 'ENOTDIR') return null
    if (code === 'ELOOP') throw new UnsafePathError(`${path} is a symlink: refusing to follow it out of the layout`, { path })
    throw err
  }
  if (!(await handle.stat()).isFile()) {
    await handle.close()
    throw new InvalidImageError(`${path} is not a regular file: refusing it`, { path })
  }
  return handle
}

/** A small file of an untrusted directory, whole, refused above `max` bytes; null when there is none. */
export async function readRegularFile(path: string, max: number, what: string, hint?: string): Promise<Buffer | null> {
  const handle = await openRegularFile(path)
  if (handle === null) return null
  try {
    return await readCapped(handle.createReadStream({ autoClose: false }), max, `${what} (${path})`, hint)
  } finally {
    await handle.close()
  }
}
