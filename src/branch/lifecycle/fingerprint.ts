import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { nameFromBytes } from '../../util/fsName.js'
import { errnoCode } from '../../util/fsx.js'
import { withLongPath } from '../../util/longPath.js'
import { PinnedDirs, throughFd } from '../../util/pinnedDirs.js'
import { outOfReach } from '../../world/scan/outOfReach.js'

/**
 * Every non-directory under `root` (and, with `dirs`, every directory) with what changes
 * when it is written: inode, size, mtime and ctime, and for everything its mode and owner.
 * Two fingerprints differ exactly at the paths written, created, removed, chmodded or
 * chowned in between. `skip` leaves out one top-level name (the store). For an overlay,
 * `root` is the upper layer, so the cost follows the change (copy-up makes its directories
 * appear without any change: `changedBetween` can leave them out). Names are read as bytes
 * (`nameFromBytes`): a name that is not UTF-8 is a path like any other, so what the sandbox
 * writes under one is normalised too. With `madeReadable`, a directory its owner (this
 * process) cannot read or search is made readable and searchable by its owner and listed
 * there: what a sandboxed command put in a directory it then closed is seen like the rest.
 * A file at a path longer than PATH_MAX is reached too (`withLongPath`); any other failure
 * to read fails the walk, so nothing is left out unseen. A directory no image can hold
 * (`outOfReach` under `root`: more than 256 deep, or a path of PATH_MAX bytes) is not
 * entered but listed in `beyond`: a walk of what a command made a directory at a time
 * would cost time and memory without end.
 */
export async function fingerprint(
  root: string,
  { skip, madeReadable, beyond }: { skip?: string | undefined; madeReadable?: string[]; beyond: string[] },
): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  const list = (dir: string) => withLongPath(dir, (at) => fs.readdir(at, { withFileTypes: true, encoding: 'buffer' }))
  // a directory of the command's left without read (no listing) or search (no lstat of its entries) is opened, once
  const opened = new Map<string, Promise<boolean>>()
  const openUp = (rel: string): Promise<boolean> => {
    let done = opened.get(rel)
    if (!done) {
      // another owner's (makeReadable false): the command could not have closed it either
      done = madeReadable ? makeReadable(root, rel).then((ok) => ok && madeReadable.push(rel) > 0) : Promise.resolve(false)
      opened.set(rel, done)
    }
    return done
  }
  const walk = async (rel: string): Promise<void> => {
    const dir = join(root, rel)
    const entries = await list(dir).catch(async (err: unknown) => {
      if (isGone(err)) return []
      if (errnoCode(err) !== 'EACCES') throw err
      return (await openUp(rel)) ? list(dir) : []
    })
    const lstat = (path: string) => withLongPath(join(root, path), (at) => fs.lstat(at, { bigint: true }))
    await Promise.all(
      entries.map(async (e) => {
        const name = nameFromBytes(e.name)
        if (rel === '' && name === skip) return
        const path = rel === '' ? name : `${rel}/${name}`
        const st = await lstat(path).catch(async (err: unknown) => {
          if (isGone(err)) return null
          if (errnoCode(err) !== 'EACCES') throw err
          return (await openUp(rel)) ? lstat(path) : null
        })
        if (st?.isDirectory()) out.set(path, `dir:${st.mode}:${st.uid}:${st.gid}`)
        else if (st) out.set(path, `${st.mode}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.rdev}:${st.uid}:${st.gid}`)
        if (!e.isDirectory()) return
        if (outOfReach([root], path) === null) return walk(path)
        beyond.push(path)
      }),
    )
  }
  await walk('')
  return out
}

/** Removed, or replaced by a non-directory, while the walk went by: not there to see. */
const isGone = (err: unknown): boolean => errnoCode(err) === 'ENOENT' || errnoCode(err) === 'ENOTDIR'

/**
 * Make the directory `rel` under `root` readable and searchable by its owner, through its own
 * descriptor (`PinnedDirs`: a symlink swapped in on the way is not followed); false when this
 * process may not (it is not the owner) or it is not there as a directory.
 */
async function makeReadable(root: string, rel: string): Promise<boolean> {
  const dirs = await PinnedDirs.open(root)
  try {
    const dir = await dirs.dir(rel)
    if (dir === null) return false
    await fs.chmod(throughFd(dir), ((await dir.stat()).mode & 0o7777) | 0o500)
    return true
  } catch {
    return false
  } finally {
    await dirs.close()
  }
}

/** The owner a fingerprint recorded for a path: its last two fields. */
export function recordedOwner(signature: string): { uid: number; gid: number } {
  const [uid, gid] = signature.split(':').slice(-2).map(Number)
  return { uid: uid!, gid: gid! }
}

/** The paths whose fingerprint differs, sorted; without `dirs`, directories are left out. */
export function changedBetween(before: Map<string, string>, after: Map<string, string>, { dirs = true }: { dirs?: boolean } = {}): string[] {
  const changed = new Set<string>()
  const counted = (sig: string) => dirs || !sig.startsWith('dir:')
  for (const [path, sig] of after) if (before.get(path) !== sig && counted(sig)) changed.add(path)
  for (const [path, sig] of before) if (!after.has(path) && counted(sig)) changed.add(path)
  return [...changed].sort()
}
