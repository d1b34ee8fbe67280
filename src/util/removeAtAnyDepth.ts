import { randomBytes } from 'node:crypto'
import { constants, promises as fs } from 'node:fs'
import { basename, dirname } from 'node:path'
import { FileWriteError } from '../errors/index.js'
import { bytesOfName } from './fsName.js'
import { errnoCode } from './fsx.js'
import { withLongPath } from './longPath.js'
import { O_PATH, pinEntry, throughFd } from './pinnedDirs.js'
import { runTool, toolComplaint } from './runTool.js'

/**
 * `rm -rf` of `path` at any depth, through directories left without permissions (an
 * overlay's `work/work` is mode 000): for what Node's `rm`, which stops at PATH_MAX and at
 * directories it cannot enter, could not remove. Its parent is opened and `removeUnder` does
 * the rest (`shown` names it in an error).
 * @throws {FileWriteError} it could not be removed; it stays sealed
 */
export async function removeAtAnyDepth(path: string, shown: string): Promise<void> {
  const dir = await withLongPath(dirname(path), (at) => fs.open(at, O_PATH | constants.O_DIRECTORY))
  try {
    await removeUnder(dir, bytesOfName(basename(path)), shown)
  } finally {
    await dir.close()
  }
}

/**
 * Remove the entry `name` of the directory `parent` holds open, whatever it holds (`shown`
 * names it in an error). It is first renamed to a plain name of ours and sealed (mode 000,
 * through its own descriptor: no other user reaches what it holds), then `rm -rf` removes
 * it (which walks any depth a directory at a time, never through a symlink), run in
 * `parent` handed over as an open directory, so no path below it (a name that is not UTF-8,
 * one past PATH_MAX) is spelled. A caller other than root first has `find` make each
 * directory that lacks them rwx for its owner (files keep their modes): its `chmod` follows
 * a symlink that another run in the same view might swap in, which reaches only what the
 * caller owns and adds only what its owner could.
 * @throws {FileWriteError} it could not be removed; it stays sealed
 */
export async function removeUnder(parent: fs.FileHandle, name: Buffer, shown: string): Promise<void> {
  const sealed = Buffer.from(`.forkpoint-removing-${randomBytes(6).toString('hex')}`)
  await fs.rename(throughFd(parent, name), throughFd(parent, sealed))
  await seal(parent, sealed)
  const open = process.getuid?.() === 0 ? '' : 'find -P "$1" -type d ! -perm -u=rwx -execdir chmod u+rwx -- {} \\; && '
  const outcome = await runTool(['/bin/sh', '-c', `cd -P /dev/stdin && ${open}rm -rf -- "$1"`, 'sh', sealed.toString()], parent.fd, 'ignore')
  const left = await fs.lstat(throughFd(parent, sealed)).then(
    () => true,
    (err: unknown) => errnoCode(err) !== 'ENOENT',
  )
  if (!left) return
  await seal(parent, sealed).catch(() => undefined)
  throw new FileWriteError(`cannot remove ${shown} (now ${sealed.toString()} beside it, sealed): ${toolComplaint(outcome)}`, { path: shown, code: null })
}

/** Mode 000 for the directory or file `name` of `parent` is, through its own descriptor (a symlink is left as it is). */
async function seal(parent: fs.FileHandle, name: Buffer): Promise<void> {
  const entry = await pinEntry(parent, name)
  if (entry === null) return
  try {
    if (!(await entry.stat()).isSymbolicLink()) await fs.chmod(throughFd(entry), 0)
  } finally {
    await entry.close()
  }
}
