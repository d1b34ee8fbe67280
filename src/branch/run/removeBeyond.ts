import { join } from 'node:path'
import { PathLimitError } from '../../errors/index.js'
import { removeAtAnyDepth } from '../../util/removeAtAnyDepth.js'
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
 * from its parent held open (`removeAtAnyDepth`), so no path of the command's making is spelled.
 * Returns one warning per directory removed.
 * @throws {FileWriteError} one could not be removed; it stays sealed
 */
export async function removeBeyond(root: string, paths: readonly string[]): Promise<string[]> {
  const warnings: string[] = []
  for (const path of paths) {
    await removeAtAnyDepth(join(root, path), `${shown(path)}, which the command made ${WHY}`)
    warnings.push(`removed ${shown(path)}, which the command made ${WHY}: what it holds could not be checked`)
  }
  return warnings
}
