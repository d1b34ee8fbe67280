import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { errnoCode } from './fsx.js'
import { UNTRUSTED_READ } from './untrustedRead.js'

/** How `readCappedFile` refuses a file: none there, not a regular file (or a symlink to one), or over the limit. */
export interface CappedFileRefusals {
  missing: () => Error
  notRegular: () => Error
  tooLarge: (size: number) => Error
}

/**
 * A file's bytes, its size checked on the open handle before anything is read. The open
 * never follows a symlink nor waits (O_NONBLOCK: a FIFO would block the event loop, and a
 * service with it, until a writer came), so only a regular file is read.
 */
export function readCappedFile(path: string | Buffer, maxBytes: number, refuse: CappedFileRefusals): Buffer {
  let fd: number
  try {
    fd = openSync(path, UNTRUSTED_READ)
  } catch (err) {
    throw errnoCode(err) === 'ELOOP' ? refuse.notRegular() : refuse.missing()
  }
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw stat.isDirectory() ? refuse.missing() : refuse.notRegular()
    if (stat.size > maxBytes) throw refuse.tooLarge(stat.size)
    const bytes = Buffer.alloc(stat.size)
    let at = 0
    for (let n = 1; n > 0 && at < bytes.length; at += n) n = readSync(fd, bytes, at, bytes.length - at, at)
    return at === bytes.length ? bytes : bytes.subarray(0, at)
  } finally {
    closeSync(fd)
  }
}
