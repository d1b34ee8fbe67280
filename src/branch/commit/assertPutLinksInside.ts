import { promises as fs } from 'node:fs'
import { assertLinkInside } from '../../world/checkout/admitTree.js'
import { fsPath, readdirNames, readlinkNameAsync } from '../../util/fsName.js'
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
  const visit = async (path: string): Promise<void> => {
    const abs = `${view}/${path}`
    const st = await fs.lstat(fsPath(abs))
    if (st.isSymbolicLink()) await assertLinkInside(lookup, path.split('/'), await readlinkNameAsync(abs))
    else if (st.isDirectory()) for (const name of await readdirNames(abs)) await visit(`${path}/${name}`)
  }
  for (const change of changes) if (change.type === 'put') await visit(change.path)
}
