import { close, closeSync, fchmod, fchmodSync, promises as fs, mkdirSync, open, openSync, readFileSync, readSync, write, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { promisify } from 'node:util'

/** Node's errno code of a thrown fs error, or undefined. */
export function errnoCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : undefined
}

/** Read a file, or null when it does not exist. Any other failure is real and thrown. */
export async function readOrNull(path: string): Promise<Buffer | null> {
  try {
    return await fs.readFile(path)
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return null
    throw err
  }
}

export async function readTextOrNull(path: string): Promise<string | null> {
  const bytes = await readOrNull(path)
  return bytes === null ? null : bytes.toString('utf8')
}

/**
 * `readOrNull` for small files (refs, HEAD, lock holders, journals, structured objects):
 * a synchronous read costs microseconds, where each of the open, stat, read and close of
 * an asynchronous one is a round trip through Node's thread pool. A path through a
 * non-directory does not exist either.
 */
export function readOrNullSync(path: string): Buffer | null {
  try {
    return readFileSync(path)
  } catch (err) {
    if (['ENOENT', 'ENOTDIR'].includes(errnoCode(err) ?? '')) return null
    throw err
  }
}

/** Fill `buffer` from the start of an open file, as far as the file goes: the part read. */
export function readIntoSync(fd: number, buffer: Buffer): Buffer {
  let have = 0
  while (have < buffer.length) {
    const n = readSync(fd, buffer, have, buffer.length - have, have)
    if (n === 0) break
    have += n
  }
  return buffer.subarray(0, have)
}

export function readTextOrNullSync(path: string): string | null {
  return readOrNullSync(path)?.toString('utf8') ?? null
}

/**
 * A synchronous write into `path`'s directory, which is made only when the write finds it
 * missing: the usual case costs no `mkdir` at all.
 */
export function inParentDir<T>(path: string, write: () => T): T {
  try {
    return write()
  } catch (err) {
    if (errnoCode(err) !== 'ENOENT') throw err
    mkdirSync(dirname(path), { recursive: true })
    return write()
  }
}

export async function exists(path: string): Promise<boolean> {
  try {
    await fs.lstat(path)
    return true
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return false
    throw err
  }
}

/** Remove a file, ignoring one that is already gone. */
export async function removeIfExists(path: string): Promise<void> {
  await fs.rm(path, { force: true, recursive: true })
}

const openFd = promisify(open)
const writeFd = promisify(write)
const fchmodFd = promisify(fchmod)
const closeFd = promisify(close)

/**
 * Create a file that must not exist yet holding `bytes`, its mode exactly `mode` (past the
 * umask). On file descriptors, not `fs.promises`: a checkout writes thousands of files,
 * and a FileHandle's making and finalizing cost more of this thread than the writing.
 */
export async function writeNewFile(path: string | Buffer, bytes: Uint8Array, mode: number): Promise<void> {
  const fd = await openFd(path, 'wx', mode)
  try {
    for (let at = 0; at < bytes.length;) at += (await writeFd(fd, bytes, at, bytes.length - at)).bytesWritten
    await fchmodFd(fd, mode)
  } finally {
    await closeFd(fd)
  }
}

/** `writeNewFile`, synchronously (on a thread that writes many files for another). */
export function writeNewFileSync(path: string | Buffer, bytes: Uint8Array, mode: number): void {
  const fd = openSync(path, 'wx', mode)
  try {
    for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at)
    fchmodSync(fd, mode) // exactly `mode`, past the umask
  } finally {
    closeSync(fd)
  }
}
