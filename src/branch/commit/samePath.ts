import { type BigIntStats, promises as fs } from 'node:fs'
import { join } from 'node:path'
import { errnoCode } from '../../util/fsx.js'
import { fsPath, readdirNames, readlinkNameAsync } from '../../util/fsName.js'

/** lstat, or null when nothing is there (also when an ancestor is not a directory). A Buffer is the path's bytes. */
export async function lstatOrNull(path: string | Buffer): Promise<BigIntStats | null> {
  try {
    return await fs.lstat(typeof path === 'string' ? fsPath(path) : path, { bigint: true })
  } catch (err) {
    if (errnoCode(err) === 'ENOENT' || errnoCode(err) === 'ENOTDIR') return null
    throw err
  }
}

export async function readdirOrEmpty(path: string): Promise<string[]> {
  try {
    return await readdirNames(path)
  } catch (err) {
    if (['ENOENT', 'ENOTDIR'].includes(errnoCode(err) ?? '')) return []
    throw err
  }
}

const isExec = (st: BigIntStats): boolean => (st.mode & 0o100n) !== 0n

/**
 * Do two paths hold the same thing, as a snapshot would record it: same type, and for
 * files the same executable bit and bytes, for symlinks the same target, for directories
 * the same names holding the same things (directory modes are not recorded). `trustStat`
 * takes equal size and mtime as equal bytes (for a copy made with timestamps kept).
 */
export async function samePath(a: string, b: string, { trustStat = false } = {}): Promise<boolean> {
  const [sa, sb] = await Promise.all([lstatOrNull(a), lstatOrNull(b)])
  if (sa === null || sb === null) return sa === sb
  if (sa.isSymbolicLink() || sb.isSymbolicLink()) return sa.isSymbolicLink() && sb.isSymbolicLink() && (await readlinkNameAsync(a)) === (await readlinkNameAsync(b))
  if (sa.isDirectory() || sb.isDirectory()) return sa.isDirectory() && sb.isDirectory() && sameDirectory(a, b, trustStat)
  if (!sa.isFile() || !sb.isFile()) return false
  if (isExec(sa) !== isExec(sb) || sa.size !== sb.size) return false
  if (sa.dev === sb.dev && sa.ino === sb.ino) return true
  if (trustStat && sa.mtimeNs === sb.mtimeNs) return true
  return sameBytes(a, b)
}

async function sameDirectory(a: string, b: string, trustStat: boolean): Promise<boolean> {
  const [na, nb] = await Promise.all([readdirNames(a), readdirNames(b)])
  if (na.length !== nb.length) return false
  const other = new Set(nb)
  if (!na.every((n) => other.has(n))) return false
  for (const name of na) if (!(await samePath(join(a, name), join(b, name), { trustStat }))) return false
  return true
}

async function sameBytes(a: string, b: string): Promise<boolean> {
  const [ha, hb] = await Promise.all([fs.open(fsPath(a), 'r'), fs.open(fsPath(b), 'r')])
  try {
    const ba = Buffer.allocUnsafe(1 << 16)
    const bb = Buffer.allocUnsafe(1 << 16)
    for (let pos = 0; ; pos += ba.length) {
      const [ra, rb] = await Promise.all([ha.read(ba, 0, ba.length, pos), hb.read(bb, 0, bb.length, pos)])
      if (ra.bytesRead !== rb.bytesRead || !ba.subarray(0, ra.bytesRead).equals(bb.subarray(0, rb.bytesRead))) return false
      if (ra.bytesRead < ba.length) return true
    }
  } finally {
    await Promise.all([ha.close(), hb.close()])
  }
}
