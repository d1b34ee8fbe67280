import { closeSync, fstatSync, openSync, readSync } from 'node:fs'

/**
 * A file's bytes, its size checked on the open handle before anything is read:
 * `missing()` is thrown when it cannot be opened as a file, `tooLarge(size)` when it holds
 * more than `maxBytes`.
 */
export function readCappedFile(path: string, maxBytes: number, refuse: { missing: () => Error; tooLarge: (size: number) => Error }): Buffer {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    throw refuse.missing()
  }
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw refuse.missing()
    if (stat.size > maxBytes) throw refuse.tooLarge(stat.size)
    const bytes = Buffer.alloc(stat.size)
    let at = 0
    for (let n = 1; n > 0 && at < bytes.length; at += n) n = readSync(fd, bytes, at, bytes.length - at, at)
    return at === bytes.length ? bytes : bytes.subarray(0, at)
  } finally {
    closeSync(fd)
  }
}
