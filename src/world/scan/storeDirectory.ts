import { lstatSync, realpathSync, statSync } from 'node:fs'
import { basename, resolve } from 'node:path'
import { STORE_DIR_NAME } from '../../store/findStore.js'
import { fsPath } from '../../util/fsName.js'

/**
 * The store's own directory, known by device and inode, so that it is left out however
 * the scan reaches it (through a symlinked workspace root, or a store path spelled
 * another way): only entries of its name, or of its real path's name, are stat-ed.
 */
export class StoreDirectory {
  /** Device and inode, '' when the store is not there. */
  readonly id: string
  private readonly names: Set<string>

  constructor(root: string) {
    const st = statSync(root, { throwIfNoEntry: false })
    this.id = st ? `${st.dev}:${st.ino}` : ''
    this.names = new Set([basename(resolve(root)), ...(st ? [basename(realpathSync(root))] : [])])
  }

  /**
   * Whether a directory entry `name` at `path` is a store and never part of a tree: this
   * store (however it is named), or any directory of the store's default name (a nested
   * workspace's store, left out as git leaves out a nested `.git`).
   */
  isAnyStore(path: string, name: string): boolean {
    return name === STORE_DIR_NAME || this.is(path)
  }

  /** Whether the directory at `path` is the store. */
  is(path: string): boolean {
    if (this.id === '' || !this.names.has(basename(path))) return false
    const st = lstatSync(fsPath(path), { throwIfNoEntry: false })
    return st !== undefined && `${st.dev}:${st.ino}` === this.id
  }
}
