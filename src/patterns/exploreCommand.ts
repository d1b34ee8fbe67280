import { Workspace } from '../branch/Workspace.js'
import { bestOfN } from './bestOfN.js'
import type { CommandValue } from './runCandidate.js'
import { type CommandPatternArgs, commandPatternOptions } from './commandPatternArgs.js'
import type { Outcome } from './types.js'

export interface ExploreCommandArgs extends CommandPatternArgs {
  /** argv, or a shell command line. */
  cmd: string | string[]
  /** Attempts (default 4); each sees its index in `FORKPOINT_ATTEMPT`. */
  n?: number
  /** Run in each finished branch; prints a number, higher is better (default: exit 0 = 1, else 0). */
  score?: string
}

/**
 * `forkpoint explore`: best-of-N over a command, each attempt sandboxed in its own branch
 * of the workspace; the highest-scoring success is committed.
 * @throws {PatternCancelledError} @throws {ConflictError} @throws {SandboxError}
 */
export async function exploreCommand(args: ExploreCommandArgs): Promise<Outcome<CommandValue>> {
  const { dir = process.cwd(), store, cmd, n = 4, score, net = 'none', signal } = args
  const ws = await Workspace.open({ dir, store })
  const task = { cmd, net, ...(score === undefined ? {} : { score }) }
  return bestOfN<CommandValue>(task, { n, ...commandPatternOptions(args) }).apply(ws, signal ? { signal } : {})
}
