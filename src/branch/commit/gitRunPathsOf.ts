import { readGitRunPaths, repositoriesAbove, repositoriesMade } from '../../world/workspace/gitRunPaths.js'
import type { BranchChange } from '../types.js'

/**
 * What the caller's next git command in `workspace` would run among a branch's `changes` (`readGitRunPaths`): in the
 * repository holding the workspace, those nested above a changed path, and those the branch makes.
 */
export async function gitRunPathsOf(workspace: string, changes: readonly BranchChange[]): Promise<string[]> {
  const paths = changes.map((change) => change.path)
  return readGitRunPaths(workspace, { nested: await repositoriesAbove(workspace, paths), made: await repositoriesMade(workspace, paths) })
}
