import { closeSync, constants, fstatSync, openSync, writeSync } from 'node:fs'
import { errnoCode } from './fsx.js'

/**
 * How a file that someone else may have put there (a cloned store, an unpacked layout, a workspace a sandboxed
 * command writes to) is opened to be read: never through a symlink (a link to `/dev/zero` would be read until memory
 * ends) and never waiting on a FIFO (an open would block until a writer came). The caller then reads it only when
 * `fstat` says it is a regular file.
 */
export const UNTRUSTED_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK

/**
 * An fd to append to `path` (made with `mode` when missing), opened as `UNTRUSTED_READ` opens for reading: never
 * through a symlink (a planted link would have the line appended to whatever it names) and never waiting on a
 * FIFO; `refuse()` when it is anything but a regular file.
 */
export function openAppendSync(path: string, mode: number, refuse: () => Error): number {
  let fd: number
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, mode)
  } catch (err) {
    throw ['ELOOP', 'ENXIO', 'EISDIR'].includes(errnoCode(err) ?? '') ? refuse() : err
  }
  if (fstatSync(fd).isFile()) return fd
  closeSync(fd)
  throw refuse()
}

/** Append `text` to `path` (see `openAppendSync`). */
export function appendUntrustedSync(path: string, text: string, refuse: () => Error, mode = 0o644): void {
  const fd = openAppendSync(path, mode, refuse)
  try {
    writeSync(fd, text)
  } finally {
    closeSync(fd)
  }
}
