import { constants, promises as fs } from 'node:fs'
import { InternalError } from '../errors/index.js'
import { bytesOfName } from './fsName.js'
import { errnoCode } from './fsx.js'

/** open(2)'s O_PATH (Linux): a descriptor that only names its file, opened without read or search access. */
export const O_PATH = 0o10000000

/** `name` in the directory `dir` holds open, or (without `name`) the file `dir` holds: a path that reaches exactly it. */
export function throughFd(dir: fs.FileHandle, name?: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`/proc/self/fd/${dir.fd}${name ? '/' : ''}`), name ?? Buffer.alloc(0)])
}

/**
 * The directories under `root` a tree's paths lie in, each reached from the one above it a
 * name at a time, never through a symlink (O_NOFOLLOW | O_DIRECTORY), and held open: what
 * is done to an entry through its directory (`throughFd`) stays in the tree even while
 * something else swaps a directory on the way for a symlink (another user, in a directory a
 * command left writable by all), where a path followed by its name would reach the host. Paths are relative to `root`, names as
 * `nameFromBytes` gives them; the open chain follows the last directory asked for, so
 * sorted paths open each directory once, and no path is ever longer than one name.
 */
export class PinnedDirs {
  private constructor(private readonly chain: Array<{ rel: string; dir: fs.FileHandle }>) {}

  static async open(root: string): Promise<PinnedDirs> {
    return new PinnedDirs([{ rel: '', dir: await fs.open(root, O_PATH | constants.O_DIRECTORY) }])
  }

  /** The directory at `rel` ('' for the root) held open, or null when a name on the way is not a directory now (a symlink, gone). */
  async dir(rel: string): Promise<fs.FileHandle | null> {
    while (!isWithin(rel, this.chain.at(-1)!.rel)) await this.chain.pop()!.dir.close()
    const names = rel === '' ? [] : rel.split('/')
    if (names.some((name) => name === '' || name === '.' || name === '..')) throw new InternalError(`not a path of names under a root: ${JSON.stringify(rel)}`)
    for (let depth = this.chain.length - 1; depth < names.length; depth++) {
      const top = this.chain.at(-1)!
      const next = await fs.open(throughFd(top.dir, bytesOfName(names[depth]!)), O_PATH | constants.O_NOFOLLOW | constants.O_DIRECTORY).catch(nullWhenNotADirectory)
      if (next === null) return null
      this.chain.push({ rel: names.slice(0, depth + 1).join('/'), dir: next })
    }
    return this.chain.at(-1)!.dir
  }

  /** The directory `rel` lies in, held open, and its last name: null as `dir` gives it. */
  async parentOf(rel: string): Promise<{ dir: fs.FileHandle; name: Buffer } | null> {
    const cut = rel.lastIndexOf('/')
    const dir = await this.dir(cut < 0 ? '' : rel.slice(0, cut))
    return dir && { dir, name: bytesOfName(rel.slice(cut + 1)) }
  }

  async close(): Promise<void> {
    for (const { dir } of this.chain.splice(0)) await dir.close()
  }
}

/** Whether `rel` is `dir` or lies under it. */
const isWithin = (rel: string, dir: string): boolean => dir === '' || rel === dir || rel.startsWith(`${dir}/`)

function nullWhenNotADirectory(err: unknown): null {
  if (['ELOOP', 'ENOTDIR', 'ENOENT'].includes(errnoCode(err) ?? '')) return null
  throw err
}

/** Open `name` in `dir` as itself (O_PATH, a symlink not followed), or null when it is gone. */
export async function pinEntry(dir: fs.FileHandle, name: Buffer): Promise<fs.FileHandle | null> {
  return fs.open(throughFd(dir, name), O_PATH | constants.O_NOFOLLOW).catch((err: unknown) => {
    if (errnoCode(err) === 'ENOENT') return null
    throw err
  })
}
