import { createHash } from 'node:crypto'
import { closeSync, promises as fs, fstatSync, openSync } from 'node:fs'
import { StoreCorruptError } from '../errors/index.js'
import type { Digest } from '../objects/digest.js'
import { errnoCode, readIntoSync } from '../util/fsx.js'
import { UNTRUSTED_READ } from '../util/untrustedRead.js'

/** StoreCorruptError (exit 5) for a store file that is not a regular file. */
export const notRegular = (path: string) =>
  new StoreCorruptError(`${path} is not a regular file (a symlink, a FIFO or a device): refusing to read it (run 'forkpoint verify')`, { path })

/** None there: a missing file, or a path through a non-directory. */
const isMissing = (err: unknown) => ['ENOENT', 'ENOTDIR'].includes(errnoCode(err) ?? '')

/**
 * A store file opened as `UNTRUSTED_READ` (a store may come from elsewhere: a cloned repository carries symlinks, an
 * unpacked archive FIFOs and devices), null when there is none; StoreCorruptError when it is a symlink.
 */
export function openStoreFileSync(path: string): number | null {
  try {
    return openSync(path, UNTRUSTED_READ)
  } catch (err) {
    if (isMissing(err)) return null
    // ENXIO: a socket
    throw ['ELOOP', 'ENXIO'].includes(errnoCode(err) ?? '') ? notRegular(path) : err
  }
}

/**
 * An object file's bytes, or null when there is none; StoreCorruptError (exit 5) when it is not a regular file.
 * With `size`, its first `size` bytes (fewer when it is shorter), read without the stat that finding the size costs
 * (a third of reading many small files): the caller checks them against their digest, so a longer file gives its
 * right bytes or fails that check; a FIFO or directory there fails its read.
 */
export function readObjectBytesSync(path: string, size?: number): Buffer | null {
  const fd = openStoreFileSync(path)
  if (fd === null) return null
  try {
    if (size !== undefined) return readIntoSync(fd, Buffer.allocUnsafe(size))
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw notRegular(path)
    return readIntoSync(fd, Buffer.allocUnsafe(stat.size))
  } catch (err) {
    throw ['EISDIR', 'EAGAIN', 'ESPIPE'].includes(errnoCode(err) ?? '') ? notRegular(path) : err
  } finally {
    closeSync(fd)
  }
}

/** A store file opened as `UNTRUSTED_READ`, null when there is none; StoreCorruptError when it is not a regular file. */
async function openRegularOrNull(path: string): Promise<fs.FileHandle | null> {
  let handle: fs.FileHandle
  try {
    handle = await fs.open(path, UNTRUSTED_READ)
  } catch (err) {
    if (isMissing(err)) return null
    throw errnoCode(err) === 'ELOOP' ? notRegular(path) : err
  }
  if ((await handle.stat()).isFile()) return handle
  await handle.close()
  throw notRegular(path)
}

/** `readObjectBytesSync` of a whole file, asynchronously: a blob may be large. */
export async function readObjectBytes(path: string): Promise<Buffer | null> {
  const handle = await openRegularOrNull(path)
  try {
    return handle && (await handle.readFile())
  } finally {
    await handle?.close()
  }
}

/** The digest of an object file's bytes, streamed; `'damaged'` when it is not a regular file (or is gone). */
export async function hashObjectFile(path: string): Promise<Digest | 'damaged'> {
  const handle = await openRegularOrNull(path).catch(() => null)
  if (handle === null) return 'damaged'
  try {
    const hash = createHash('sha256')
    for await (const chunk of handle.createReadStream({ autoClose: false })) hash.update(chunk as Buffer)
    return `sha256:${hash.digest('hex')}`
  } finally {
    await handle.close()
  }
}
