import { randomBytes } from 'node:crypto'
import { type BigIntStats, closeSync, fsyncSync, openSync, promises as fs, renameSync, rmSync, writeSync } from 'node:fs'
import { dirname, join, basename } from 'node:path'
import { CorruptDataError } from '../errors/index.js'
import { errnoCode } from './fsx.js'

/** Random once per process (pids repeat across PID namespaces sharing a store), then a counter: cheap per call. */
const processTag = `${process.pid}-${randomBytes(6).toString('hex')}`
let counter = 0

export function tempSibling(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${processTag}-${(counter++).toString(36)}`)
}

/**
 * Write a file so that readers see the old bytes or the new, never a mix: write a
 * temp sibling, optionally fsync it, rename over the target. `data` may be made from the
 * new file's own stat (its inode and birth time stay with it through the rename).
 */
export async function atomicWrite(path: string, data: Uint8Array | string | ((file: BigIntStats) => string), opts: { fsync?: boolean; mode?: number } = {}): Promise<void> {
  const tmp = tempSibling(path)
  const handle = await fs.open(tmp, 'wx', opts.mode ?? 0o644)
  try {
    await handle.writeFile(typeof data === 'function' ? data(await handle.stat({ bigint: true })) : data)
    if (opts.fsync) await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    await fs.rename(tmp, path)
  } catch (err) {
    await fs.rm(tmp, { force: true })
    throw renameFailure(err, path)
  }
}

/** `atomicWrite` for callers on a synchronous path and for small files: the parts back to back. */
export function atomicWriteSync(path: string, parts: readonly Uint8Array[], opts: { fsync?: boolean } = {}): void {
  const tmp = tempSibling(path)
  const fd = openSync(tmp, 'w', 0o644)
  try {
    for (const part of parts) for (let off = 0; off < part.length;) off += writeSync(fd, part, off)
    if (opts.fsync) fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  try {
    renameSync(tmp, path)
  } catch (err) {
    rmSync(tmp, { force: true })
    throw renameFailure(err, path)
  }
}

/** A directory where a file is written is bad data (exit 5), never replaced: a file planted in a store or a workspace. */
function renameFailure(err: unknown, path: string): unknown {
  return errnoCode(err) === 'EISDIR' ? new CorruptDataError(`${path} is a directory where forkpoint keeps a file: move it away`, { path }) : err
}
