import { PathLimitError } from '../../errors/index.js'
import { PinnedDirs } from '../../util/pinnedDirs.js'
import { removeUnder } from '../../util/removeAtAnyDepth.js'
import { settleInTurn } from '../../util/settleAll.js'
import { quotePath } from '../../world/diff/quotePath.js'

const shown = (path: string): string => quotePath(path.length > 200 ? `${path.slice(0, 200)}...` : path)

const WHY = 'more than 256 directories deep or at a path of 4096 bytes or more, which no image holds'

/** A run does not start in a workspace holding a directory its check after the run would not enter (`fingerprint`'s `beyond`). */
export function refuseBeyond(path: string): PathLimitError {
  return new PathLimitError(`a sandboxed run does not start beside ${shown(path)}: it is ${WHY}, and the check after the run could not look inside; move it`, { path })
}

/**
 * Remove the directories a run made beyond an image's reach (`fingerprint`'s `beyond`, relative
 * to `root`), whatever they hold: what a command left there could not be checked. Each goes
 * from its parent, reached as `PinnedDirs` reaches it (one no longer reached so is left to
 * the run that moved it), by `removeUnder`, so no path of the command's making is spelled.
 * Returns one warning per directory removed.
 * @throws {FileWriteError} one could not be removed; it stays sealed
 */
export async function removeBeyond(root: string, paths: readonly string[]): Promise<string[]> {
  const dirs = await PinnedDirs.open(root)
  try {
    const done = await settleInTurn(
      paths.map((path) => async () => {
        const at = await dirs.parentOf(path)
        const removed = at !== null && (await removeUnder(at.dir, at.name, `${shown(path)}, which the command made ${WHY}`))
        return removed ? [`removed ${shown(path)}, which the command made ${WHY}: what it holds could not be checked`] : []
      }),
    )
    return done.flat()
  } finally {
    await dirs.close()
  }
}
