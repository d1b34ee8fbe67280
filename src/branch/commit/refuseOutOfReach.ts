import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { fsPath, nameFromBytes } from '../../util/fsName.js'
import { errnoCode } from '../../util/fsx.js'
import { outOfReach, outOfReachError } from '../../world/scan/outOfReach.js'
import type { BranchChange } from '../types.js'
import { lstatOrNull } from './samePath.js'

/**
 * Refuse (PathLimitError, exit 5) to `what` (commit, snapshot) a branch whose puts hold a
 * path no image can (`outOfReach` under each of `roots`: the branch's view, the directory it
 * is written into), before anything reads them by path. What sandboxed work can make a
 * directory at a time comes to a clear refusal, not a failure halfway.
 */
export async function refuseOutOfReach(what: string, changes: readonly BranchChange[], roots: readonly [view: string, ...others: string[]]): Promise<void> {
  // a directory is entered as listed (`isDirectory` of a listing never follows a link); a put itself is lstat'ed
  const visit = async (rel: string, isDirectory: boolean | null): Promise<void> => {
    const why = outOfReach(roots, rel)
    if (why !== null) throw outOfReachError(what, rel, why)
    if (!(isDirectory ?? (await lstatOrNull(join(roots[0], rel)))?.isDirectory())) return
    const entries = await fs.readdir(fsPath(join(roots[0], rel)), { withFileTypes: true, encoding: 'buffer' }).catch((err: unknown) => {
      // what cannot be listed is not read here: the copy that follows says so, as it would without this walk
      if (['ENOTDIR', 'ENOENT', 'EACCES'].includes(errnoCode(err) ?? '')) return []
      throw err
    })
    for (const e of entries) await visit(`${rel}/${nameFromBytes(e.name)}`, e.isDirectory())
  }
  for (const change of changes) if (change.type === 'put') await visit(change.path, null)
}
