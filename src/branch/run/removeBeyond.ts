import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { constants, promises as fs } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { FileWriteError, PathLimitError } from '../../errors/index.js'
import { bytesOfName } from '../../util/fsName.js'
import { errnoCode } from '../../util/fsx.js'
import { withLongPath } from '../../util/longPath.js'
import { quotePath } from '../../world/diff/quotePath.js'

const shown = (path: string): string => quotePath(path.length > 200 ? `${path.slice(0, 200)}...` : path)

const WHY = 'more than 256 directories deep or at a path of 4096 bytes or more, which no image holds'

/** The tools removal runs, by absolute path and with a fixed PATH: never a program the command left in the workspace. */
const TOOLS_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' }

/** A run does not start in a workspace holding a directory its check after the run would not enter (`fingerprint`'s `beyond`). */
export function refuseBeyond(path: string): PathLimitError {
  return new PathLimitError(`a sandboxed run does not start beside ${shown(path)}: it is ${WHY}, and the check after the run could not look inside; move it`, { path })
}

/**
 * Remove the directories a run made beyond an image's reach (`fingerprint`'s `beyond`, relative
 * to `root`), whatever they hold: what a command left there could not be checked. Each is
 * first renamed to a plain name of ours and sealed (mode 000: no other user reaches what it
 * holds), then goes by `chmod -R u+rwx` and `rm -rf` (which walk any depth a directory at a
 * time), run in its parent handed over as an open directory, so no path of the command's
 * making (a name that is not UTF-8, one past PATH_MAX) is ever spelled. Returns one warning
 * per directory removed.
 * @throws {FileWriteError} one could not be removed; it stays sealed
 */
export async function removeBeyond(root: string, paths: readonly string[]): Promise<string[]> {
  const warnings: string[] = []
  for (const path of paths) {
    const parent = dirname(path)
    await withLongPath(parent === '.' ? root : join(root, parent), async (at) => {
      const dir = await fs.open(at, constants.O_RDONLY | constants.O_DIRECTORY)
      try {
        await removeSealed(dir, bytesOfName(basename(path)), path)
      } finally {
        await dir.close()
      }
    })
    warnings.push(`removed ${shown(path)}, which the command made ${WHY}: what it holds could not be checked`)
  }
  return warnings
}

async function removeSealed(parent: fs.FileHandle, name: Buffer, path: string): Promise<void> {
  const inParent = (entry: Buffer | string) => Buffer.concat([Buffer.from(`/proc/self/fd/${parent.fd}/`), Buffer.from(entry)])
  const sealed = `.forkpoint-beyond-${randomBytes(6).toString('hex')}`
  await fs.rename(inParent(name), inParent(sealed))
  await fs.chmod(inParent(sealed), 0)
  const rm = spawn('/bin/sh', ['-c', 'cd -P /dev/stdin && chmod -R u+rwx -- "$1" && rm -rf -- "$1"', 'sh', sealed], {
    stdio: [parent.fd, 'ignore', 'pipe'],
    env: TOOLS_ENV,
  })
  let stderr = ''
  rm.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const [status] = (await once(rm, 'close')) as [number | null]
  const left = await fs.lstat(inParent(sealed)).then(
    () => true,
    (err: unknown) => errnoCode(err) !== 'ENOENT',
  )
  if (!left) return
  await fs.chmod(inParent(sealed), 0).catch(() => undefined)
  throw new FileWriteError(`cannot remove ${shown(path)} (now ${sealed}, sealed), which the command made ${WHY}: ${stderr.trim() || `exit ${status}`}`, {
    path,
    code: null,
  })
}
