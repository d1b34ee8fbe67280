import { lstatSync, realpathSync, statSync } from 'node:fs'
import { basename, resolve } from 'node:path'
import { fsPath } from './fsName.js'

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

  /** Whether the directory at `path` is the store. */
  is(path: string): boolean {
    if (this.id === '' || !this.names.has(basename(path))) return false
    const st = lstatSync(fsPath(path), { throwIfNoEntry: false })
    return st !== undefined && `${st.dev}:${st.ino}` === this.id
  }
}
