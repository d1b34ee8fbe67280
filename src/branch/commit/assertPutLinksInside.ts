import { type Stats, promises as fs } from 'node:fs'
import { assertLinkInside } from '../../world/checkout/admitTree.js'
import { fsPath, nameFromBytes, readlinkNameAsync } from '../../util/fsName.js'
import { directoryLookup } from '../../world/checkout/treeLinks.js'
import type { BranchChange } from '../types.js'

/**
 * The one rule for symlinks on every way in (docs/world-integrity.md), for a commit: no
 * symlink a branch puts, at a changed path or inside a changed directory, may lead out of
 * the branch's view, resolved through the view's own links. Throws UnsafePathError
 * (exit 5) naming the first, before anything is staged.
 */
export async function assertPutLinksInside(view: string, changes: BranchChange[]): Promise<void> {
  const lookup = directoryLookup(view)
  // a put itself is lstat'ed; what lies inside is typed by its directory's listing, which never follows a link
  const visit = async (path: string, type: Pick<Stats, 'isSymbolicLink' | 'isDirectory'>): Promise<void> => {
    const abs = `${view}/${path}`
    if (type.isSymbolicLink()) await assertLinkInside(lookup, path.split('/'), await readlinkNameAsync(abs))
    else if (type.isDirectory()) {
      for (const entry of await fs.readdir(fsPath(abs), { withFileTypes: true, encoding: 'buffer' })) await visit(`${path}/${nameFromBytes(entry.name)}`, entry)
    }
  }
  for (const change of changes) if (change.type === 'put') await visit(change.path, await fs.lstat(fsPath(`${view}/${change.path}`)))
}
