import { PathLimitError } from '../../errors/index.js'
import { bytesOfName } from '../../util/fsName.js'
import { PATH_MAX } from '../../util/longPath.js'
import { MAX_TREE_DEPTH } from '../checkout/checkoutCost.js'
import { quotePath } from '../diff/quotePath.js'

/**
 * Why the directory or file at `rel` under `roots` (each a directory it is read from or
 * written to) cannot be in an image, or null: more than MAX_TREE_DEPTH directories deep, or
 * a path under one of the roots of PATH_MAX bytes or more, which no one lookup reaches. A
 * checkout refuses to write either; a process makes them a directory at a time.
 */
export function outOfReach(roots: readonly string[], rel: string): string | null {
  let depth = 1
  for (let i = rel.indexOf('/'); depth <= MAX_TREE_DEPTH && i >= 0; i = rel.indexOf('/', i + 1)) depth++
  if (depth > MAX_TREE_DEPTH) return `it is more than ${MAX_TREE_DEPTH} directories deep`
  const bytes = bytesOfName(rel).length
  const root = roots.find((r) => bytesOfName(r).length + 1 + bytes >= PATH_MAX)
  return root === undefined ? null : `its path under ${root} is ${PATH_MAX} bytes or more`
}

/** The refusal (exit 5) of `what` (`snapshot`, `commit`) for `rel`, for the reason `outOfReach` gave. */
export function outOfReachError(what: string, rel: string, why: string): PathLimitError {
  const shown = rel.length > 200 ? `${rel.slice(0, 200)}...` : rel
  return new PathLimitError(`cannot ${what} ${quotePath(shown)}: ${why}, which an image cannot hold; move it, or leave it out with .forkpointignore`, { path: rel })
}
