import { constants, promises as fs } from 'node:fs'
import { InternalError } from '../errors/index.js'
import { TaskQueues } from './TaskQueues.js'
import { bytesOfName, fsPath } from './fsName.js'
import { throughFd } from './pinnedDirs.js'

/** Linux's limits (limits.h): bytes in one name, and in a whole path with its NUL. */
export const NAME_MAX = 255
export const PATH_MAX = 4096

/** The most bytes of a path opened at once on the way down a long one: well under PATH_MAX with `/proc/self/fd/N/` before it. */
const PIECE_BYTES = 3072

const SLASH = 0x2f

/** Long paths are reached one at a time: each holds two descriptors at most, however many a walk asks for at once. */
const longPaths = new TaskQueues()

/**
 * Run `use` on a path the kernel takes for `path`, however long: `path` itself when it is
 * shorter than PATH_MAX, else `/proc/self/fd/N/REST`, N a directory opened a piece of the
 * path at a time. A process makes a deeper path a directory at a time (`mkdir d; cd d`), so
 * what it leaves there is reached this way (the path's links resolve as they would in one
 * lookup). The path as `fsPath` gives it: a Buffer where its names are not UTF-8.
 */
export async function withLongPath<T>(path: string, use: (reachable: string | Buffer) => Promise<T>): Promise<T> {
  const bytes = bytesOfName(path)
  if (bytes.length < PATH_MAX) return use(fsPath(path))
  return longPaths.run('', async () => {
    const pieces = splitAtSlashes(bytes)
    let dir: fs.FileHandle | null = null
    try {
      for (const piece of pieces.slice(0, -1)) {
        const next: fs.FileHandle = await fs.open(under(dir, piece), constants.O_RDONLY | constants.O_DIRECTORY)
        await dir?.close()
        dir = next
      }
      return await use(under(dir, pieces.at(-1)!))
    } finally {
      await dir?.close()
    }
  })
}

/** `piece` under the directory `dir` holds open (`piece` itself, from the root, before any is open). */
function under(dir: fs.FileHandle | null, piece: Buffer): Buffer {
  return dir === null ? piece : throughFd(dir, piece)
}

/** `path` cut at slashes into pieces of at most PIECE_BYTES (a name is at most NAME_MAX, so each piece holds one). */
function splitAtSlashes(path: Buffer): Buffer[] {
  const pieces: Buffer[] = []
  let start = 0
  while (path.length - start > PIECE_BYTES) {
    const cut = path.lastIndexOf(SLASH, start + PIECE_BYTES)
    if (cut <= start) throw new InternalError(`a path holds a name longer than ${NAME_MAX} bytes, which no file system holds`)
    pieces.push(path.subarray(start, cut))
    start = cut + 1
  }
  pieces.push(path.subarray(start))
  return pieces
}
