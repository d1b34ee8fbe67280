import { type BigIntStats, type Stats, constants, promises as fs } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import { errnoCode } from '../../util/fsx.js'
import { O_PATH, PinnedDirs, pinEntry, throughFd } from '../../util/pinnedDirs.js'
import { settleInTurn } from '../../util/settleAll.js'
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
 * leaving another user a way to root. Each path is reached through its directories held
 * open (`PinnedDirs`) and changed through its own descriptor, so a directory or the entry
 * swapped for a symlink since the walk (by another user, where the command left one
 * writable by all) never turns a change onto a file outside; a path no longer reached that
 * way is left as it is. Returns one warning per path it changed.
 */
export async function normaliseWritten({ view, paths, before }: { view: string; paths: string[]; before: Map<string, string> }): Promise<string[]> {
  const dirs = await PinnedDirs.open(view)
  try {
    // each path whatever became of those before: one that fails leaves none after it as it is
    const done = await settleInTurn(
      paths.map((path) => async () => {
        const prior = before.get(path)
        const at = await dirs.parentOf(path)
        return at ? makePlain(at.dir, at.name, path, prior === undefined ? caller() : recordedOwner(prior)) : []
      }),
    )
    return done.flat()
  } finally {
    await dirs.close()
  }
}

/** `normaliseWritten` of the entry `name` of `dir` (`path` names it); its warnings. */
async function makePlain(dir: FileHandle, name: Buffer, path: string, owner: { uid: number; gid: number }): Promise<string[]> {
  const seen = await lstatOrNull(throughFd(dir, name))
  if (seen === null || isPlain(seen, owner)) return []
  if (isNode(seen)) {
    // by name in its directory: whatever took its place since is in the tree too, and a directory is not unlinked
    await fs.unlink(throughFd(dir, name)).catch(() => undefined)
    return [`removed ${path}, a FIFO or device node the command made: nothing sandboxed leaves one on the host`]
  }
  const entry = await pinEntry(dir, name)
  if (entry === null) return []
  try {
    const st = await entry.stat({ bigint: true })
    const warnings: string[] = []
    if (await giveBack(entry, st, owner)) warnings.push(`gave ${path} to uid ${owner.uid}, gid ${owner.gid}: its owner as before the run, or the caller`)
    if ((st.isFile() || st.isDirectory()) && (st.mode & SPECIAL_BITS) !== 0n) {
      await fs.chmod(throughFd(entry), Number(st.mode & 0o777n))
      warnings.push(`cleared the setuid, setgid or sticky bit of ${path}`)
    }
    return warnings
  } finally {
    await entry.close()
  }
}

/** Nothing to change: no special bit, not a node, owned by `owner`. */
const isPlain = (st: BigIntStats, owner: { uid: number; gid: number }): boolean =>
  !isNode(st) && (st.mode & SPECIAL_BITS) === 0n && st.uid === BigInt(owner.uid) && st.gid === BigInt(owner.gid)

const isNode = (st: BigIntStats): boolean => st.isFIFO() || st.isBlockDevice() || st.isCharacterDevice()

const caller = (): { uid: number; gid: number } => ({ uid: process.getuid!(), gid: process.getgid!() })

/** Chown the entry `entry` holds (a symlink itself, not what it names) to `owner` when it has another; false when it had that owner already (or only root could change it). */
async function giveBack(entry: FileHandle, st: BigIntStats, owner: { uid: number; gid: number }): Promise<boolean> {
  if (st.uid === BigInt(owner.uid) && st.gid === BigInt(owner.gid)) return false
  try {
    await fs.chown(throughFd(entry), owner.uid, owner.gid)
    return true
  } catch (err) {
    if (errnoCode(err) === 'EPERM') return false
    throw err
  }
}

/**
 * Put the view's own directory back as it was before the run (`before`, its stat then): the walk lists what lies
 * under it, so a `chown` or `chmod` of `.` (giving the whole workspace to another user, or making it writable by
 * all) is undone here. Returns one warning per change put back.
 */
export async function restoreRoot(view: string, before: Stats): Promise<string[]> {
  const root = await fs.open(view, O_PATH | constants.O_DIRECTORY)
  try {
    const now = await root.stat()
    const warnings: string[] = []
    if (now.uid !== before.uid || now.gid !== before.gid) {
      await fs.chown(throughFd(root), before.uid, before.gid)
      warnings.push(`gave . back to uid ${before.uid}, gid ${before.gid}: the command gave it to uid ${now.uid}, gid ${now.gid}`)
    }
    if ((now.mode & 0o7777) !== (before.mode & 0o7777)) {
      await fs.chmod(throughFd(root), before.mode & 0o7777)
      warnings.push(`put the mode of . back to ${(before.mode & 0o7777).toString(8)}: the command made it ${(now.mode & 0o7777).toString(8)}`)
    }
    return warnings
  } finally {
    await root.close()
  }
}
