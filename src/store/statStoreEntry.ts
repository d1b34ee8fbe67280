import { type Stats, lstatSync, statSync } from 'node:fs'
import { StoreCorruptError, UsageError } from '../errors/index.js'
import { errnoCode } from '../util/fsx.js'

/**
 * `stat` of a path of a store being looked for or opened; undefined when there is none (or a file stands where a
 * directory of it would). A store this user may not reach (a directory of another user's on the way, mode 0700) is a
 * usage error (exit 2) naming it, not an internal one.
 */
export function statStoreEntry(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false })
  } catch (err) {
    if (errnoCode(err) === 'ENOTDIR') return undefined
    if (errnoCode(err) !== 'EACCES') throw err
    throw new UsageError(`cannot read ${path}: permission denied (run forkpoint as a user who may read the store)`, { name: path })
  }
}

/**
 * Refuse (StoreCorruptError, exit 5) a workspace's `.forkpoint` that is a symlink: a cloned repository can carry one
 * leading anywhere, and `init` would make a store there, marked as made here. A store named explicitly (`--store`)
 * may be reached through links.
 */
export function assertStoreNotLinked(storeDir: string): void {
  if (lstatSync(storeDir, { throwIfNoEntry: false })?.isSymbolicLink())
    throw new StoreCorruptError(`${storeDir} is a symlink: a workspace's store must be a directory of it (name it with --store to use it)`, { root: storeDir })
}
