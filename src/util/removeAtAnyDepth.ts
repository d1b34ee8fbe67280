import { randomBytes } from 'node:crypto'
import { constants, promises as fs } from 'node:fs'
import { basename, dirname } from 'node:path'
import { FileWriteError } from '../errors/index.js'
import { bytesOfName } from './fsName.js'
import { errnoCode } from './fsx.js'
import { withLongPath } from './longPath.js'
import { runTool, toolComplaint } from './runTool.js'

/**
 * `rm -rf` of `path` at any depth, through directories left without permissions (an
 * overlay's `work/work` is mode 000): for what Node's `rm`, which stops at PATH_MAX and at
 * directories it cannot enter, could not remove. Its parent is opened and `removeUnder` does
 * the rest (`shown` names it in an error).
 * @throws {FileWriteError} it could not be removed; it stays sealed
 */
export async function removeAtAnyDepth(path: string, shown: string): Promise<void> {
  const dir = await withLongPath(dirname(path), (at) => fs.open(at, constants.O_RDONLY | constants.O_DIRECTORY))
  try {
    await removeUnder(dir, bytesOfName(basename(path)), shown)
  } finally {
    await dir.close()
  }
}

/**
 * Remove the entry `name` of the directory `parent` holds open, whatever it holds (`shown`
 * names it in an error). It is first renamed to a plain name of ours and sealed (mode 000:
 * no other user reaches what it holds), then `find` makes each directory that lacks them
 * rwx for its owner before reading it (files keep their modes) and `rm -rf` removes it:
 * both walk any depth a directory at a time, run in `parent` handed over as an open
 * directory, so no path below it (a name that is not UTF-8, one past PATH_MAX) is spelled.
 * `chmod` follows a symlink it is given, but no entry changes between `find`'s look and its
 * turn: the seal keeps other users out, and what made the tree has stopped (a sandboxed run's
 * PID namespace is empty when it returns).
 * @throws {FileWriteError} it could not be removed; it stays sealed
 */
async function removeUnder(parent: fs.FileHandle, name: Buffer, shown: string): Promise<void> {
  const inParent = (entry: Buffer | string) => Buffer.concat([Buffer.from(`/proc/self/fd/${parent.fd}/`), Buffer.from(entry)])
  const sealed = `.forkpoint-removing-${randomBytes(6).toString('hex')}`
  await fs.rename(inParent(name), inParent(sealed))
  await fs.chmod(inParent(sealed), 0)
  const script = 'cd -P /dev/stdin && find -P "$1" -type d ! -perm -u=rwx -execdir chmod u+rwx -- {} \\; && rm -rf -- "$1"'
  const outcome = await runTool(['/bin/sh', '-c', script, 'sh', sealed], parent.fd, 'ignore')
  const left = await fs.lstat(inParent(sealed)).then(
    () => true,
    (err: unknown) => errnoCode(err) !== 'ENOENT',
  )
  if (!left) return
  await fs.chmod(inParent(sealed), 0).catch(() => undefined)
  throw new FileWriteError(`cannot remove ${shown} (now ${sealed} beside it, sealed): ${toolComplaint(outcome)}`, { path: shown, code: null })
}
