import { type BigIntStats, promises as fs } from 'node:fs'
import { join } from 'node:path'
import { errnoCode } from '../../util/fsx.js'
import { withLongPath } from '../../util/longPath.js'
import { recordedOwner } from '../lifecycle/fingerprint.js'
import { lstatOrNull } from './samePath.js'

/** The setuid, setgid and sticky bits. */
const SPECIAL_BITS = 0o7000n

/**
 * Make what a sandboxed command wrote under `view` as plain as a checkout makes files, once
 * the command's processes are gone and before the result goes back: no setuid, setgid or
 * sticky bit (cleared), no FIFO or device node (removed), and each path owned as it was
 * before the run (`before`, a fingerprint of it), or by the caller when it is new (root's
 * sandbox can give files to any id of its range). The host honours a setuid bit however
 * the sandbox's own mount was flagged, so this is what keeps a root caller's run from
 * leaving another user a way to root. Returns one warning per path it changed.
 */
export async function normaliseWritten({ view, paths, before }: { view: string; paths: string[]; before: Map<string, string> }): Promise<string[]> {
  const warnings: string[] = []
  for (const path of paths) {
    const prior = before.get(path)
    const owner = prior === undefined ? caller() : recordedOwner(prior)
    warnings.push(...(await withLongPath(join(view, path), (at) => makePlain(at, path, owner))))
  }
  return warnings
}

/** `normaliseWritten` of one path (`at` reaches it); its warnings. */
async function makePlain(at: string | Buffer, path: string, owner: { uid: number; gid: number }): Promise<string[]> {
  const st = await lstatOrNull(at)
  if (st === null) return []
  if (isNode(st)) {
    await fs.rm(at, { force: true })
    return [`removed ${path}, a FIFO or device node the command made: nothing sandboxed leaves one on the host`]
  }
  const warnings: string[] = []
  if (await giveBack(at, st, owner)) warnings.push(`gave ${path} to uid ${owner.uid}, gid ${owner.gid}: its owner as before the run, or the caller`)
  if ((st.isFile() || st.isDirectory()) && (st.mode & SPECIAL_BITS) !== 0n) {
    await fs.chmod(at, Number(st.mode & 0o777n))
    warnings.push(`cleared the setuid, setgid or sticky bit of ${path}`)
  }
  return warnings
}

const isNode = (st: BigIntStats): boolean => st.isFIFO() || st.isBlockDevice() || st.isCharacterDevice()

const caller = (): { uid: number; gid: number } => ({ uid: process.getuid!(), gid: process.getgid!() })

/** Chown the path to `owner` when it has another; false when it had that owner already (or only root could change it). */
async function giveBack(at: string | Buffer, st: BigIntStats, owner: { uid: number; gid: number }): Promise<boolean> {
  if (st.uid === BigInt(owner.uid) && st.gid === BigInt(owner.gid)) return false
  try {
    await fs.lchown(at, owner.uid, owner.gid)
    return true
  } catch (err) {
    if (errnoCode(err) === 'EPERM') return false
    throw err
  }
}
