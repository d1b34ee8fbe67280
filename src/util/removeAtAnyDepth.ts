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
 * names it in an error); false when it is gone already. It is held open as itself
 * (O_PATH), renamed to a plain name of ours and sealed through that descriptor (mode 000: no other
 * user reaches what it holds; a symlink is left as it is), then `rm -rf` removes it (which
 * walks any depth a directory at a time, never through a symlink), run in `parent` handed
 * over as an open directory, so no path below it (a name that is not UTF-8, one past
 * PATH_MAX) is spelled. A caller other than root first has `chmod -R u+rwX` make its
 * directories searchable (one process for any number; a file in it gains owner read and
 * write, and a symlink another run in the same view swaps in reaches only what the caller
 * owns). What is held open is what counts: the entry is held before the rename and must be
 * what the new name holds after it, and it is removed when that has no links left (a
 * directory) or one fewer (anything else); a tree moved away and replaced under either
 * name is not taken for removed.
 * @throws {FileWriteError} it could not be removed (it stays sealed), or it was moved away
 */
export async function removeUnder(parent: fs.FileHandle, name: Buffer, shown: string): Promise<boolean> {
  const entry = await pinEntry(parent, name)
  if (entry === null) return false
  try {
    const held = await entry.stat({ bigint: true })
    // through the descriptor: whatever name it has by then
    const seal = () => (held.isSymbolicLink() ? Promise.resolve() : fs.chmod(throughFd(entry), 0))
    const sealed = Buffer.from(`.forkpoint-removing-${randomBytes(6).toString('hex')}`)
    const gone = await fs.rename(throughFd(parent, name), throughFd(parent, sealed)).then(
      () => false,
      (err: unknown) => {
        if (errnoCode(err) === 'ENOENT') return true
        throw err
      },
    )
    if (gone && (await entry.stat({ bigint: true })).nlink === 0n) return true
    const renamed = gone ? null : await fs.lstat(throughFd(parent, sealed), { bigint: true }).catch(() => null)
    await seal()
    if (renamed?.ino !== held.ino || renamed.dev !== held.dev) throw movedAway(shown)
    const open = process.getuid?.() === 0 ? '' : 'chmod -R u+rwX -- "$1" && '
    const outcome = await runTool(['/bin/sh', '-c', `cd -P /dev/stdin && ${open}rm -rf -- "$1"`, 'sh', sealed.toString()], parent.fd, 'ignore')
    const links = (await entry.stat({ bigint: true })).nlink
    if (held.isDirectory() ? links === 0n : links < held.nlink) return true
    await seal().catch(() => undefined)
    throw new FileWriteError(`cannot remove ${shown} (sealed, as ${sealed.toString()} unless it was moved): ${toolComplaint(outcome)}`, { path: shown, code: null })
  } finally {
    await entry.close()
  }
}

const movedAway = (shown: string) => new FileWriteError(`cannot remove ${shown}: it was moved while being removed`, { path: shown, code: null })
