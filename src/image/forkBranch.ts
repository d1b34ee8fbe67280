import { UsageError } from '../errors/index.js'
import { type Digest, shortId } from '../objects/digest.js'

/** Where the children of an image are kept: `refs/forks/<short id>`, one ref per child below it. */
export const forkRefPrefix = (image: Digest): string => `refs/forks/${shortId(image)}`

const FORK_REF = /^refs\/forks\/([0-9a-f]{12})\/(\d+)$/
const FORK_BRANCH = /^fork-([0-9a-f]{12})-(\d+)$/

/** The branch `fork --materialize` makes for a child: `refs/forks/<short>/<i>` -> `fork-<short>-<i>`. */
export function forkBranchName(ref: string): string {
  const [, short, index] = FORK_REF.exec(ref) ?? []
  if (short === undefined) throw new UsageError(`${ref} is not the ref of a fork's child (refs/forks/<id>/<index>)`, { ref })
  return `fork-${short}-${index}`
}

/** The child's ref a fork branch's snapshots move: `fork-<short>-<i>` -> `refs/forks/<short>/<i>`. */
export function forkRefOfBranch(name: string): string {
  const [, short, index] = FORK_BRANCH.exec(name) ?? []
  if (short === undefined) throw new UsageError(`branch ${JSON.stringify(name)} is not a fork's branch (fork-<id>-<index>, made by 'forkpoint fork --materialize')`, { name })
  return `refs/forks/${short}/${index}`
}
