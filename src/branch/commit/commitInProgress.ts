import { MergeConflictError, UsageError } from '../../errors/index.js'
import { filesWithMarkers, leftoverFiles } from '../../world/merge/unresolvedConflicts.js'
import type { Store } from '../../store/Store.js'
import { readCommitState } from '../../world/merge/commitState.js'
import { quotePath } from '../../world/diff/quotePath.js'

/** The commands that end a branch commit in progress, as one clause of a message. */
export function commitNextSteps(name: string): string {
  return `fix the files, then 'forkpoint commit ${name} --continue', or 'forkpoint commit ${name} --abort'`
}

/**
 * The paths a branch commit into the workspace finds already settled by hand: none when no
 * commit is in progress, else the conflicts of this branch's stopped commit, once `resume`
 * says they are fixed and no marker (or, unless `keepLeftovers`, no version kept beside) remains.
 * @throws {UsageError} another branch's commit is in progress; this one's is and `resume` is not set; `resume` with none in progress
 * @throws {MergeConflictError} markers or versions kept beside remain (nothing written)
 */
export async function settledPaths({
  store,
  workspace,
  name,
  resume,
  keepLeftovers,
}: {
  store: Store
  workspace: string
  name: string
  resume: boolean
  keepLeftovers: boolean
}): Promise<Set<string>> {
  const pending = await readCommitState(store)
  if (!pending) {
    if (resume) throw new UsageError(`commit ${name} --continue: no commit of ${name} is in progress`, { name })
    return new Set()
  }
  if (pending.branch !== name)
    throw new UsageError(`the commit of branch ${pending.branch} is in progress in the workspace: ${commitNextSteps(pending.branch)}`, { name: pending.branch })
  if (!resume) throw new UsageError(`the commit of branch ${name} is in progress in the workspace: ${commitNextSteps(name)}`, { name })
  const marked = await filesWithMarkers(workspace, pending.conflicts)
  if (marked.length > 0)
    throw new MergeConflictError(`commit ${name} --continue: conflict markers remain in ${marked.map(quotePath).join(', ')}: ${commitNextSteps(name)}`, { paths: marked })
  const left = keepLeftovers ? [] : await leftoverFiles(workspace, pending.conflicts)
  if (left.length > 0) {
    throw new MergeConflictError(
      `commit ${name} --continue: the versions kept beside conflicts are still there: ${left.map(quotePath).join(', ')}: keep the one you want at the conflict's path and remove the others, or 'forkpoint commit ${name} --continue --keep-leftovers' to keep them too`,
      { paths: left },
    )
  }
  return new Set(pending.conflicts.map((c) => c.path))
}
