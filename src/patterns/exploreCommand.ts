import type { StoreLocator } from '../store/findStore.js'
import { Workspace } from '../branch/Workspace.js'
import type { NetMode } from '../sandbox/runSandboxed.js'
import { bestOfN } from './bestOfN.js'
import type { CommandValue } from './runCandidate.js'
import type { CandidateRunner } from './runCandidates.js'
import type { Outcome } from './types.js'

export interface ExploreCommandArgs extends StoreLocator {
  /** argv, or a shell command line. */
  cmd: string | string[]
  /** Attempts (default 4); each sees its index in `FORKPOINT_ATTEMPT`. */
  n?: number
  /** Run in each finished branch; prints a number, higher is better (default: exit 0 = 1, else 0). */
  score?: string
  maxParallel?: number
  timeout?: number | string
  net?: NetMode
  /** false: plain processes in the branch directories instead of sandboxes. */
  isolate?: boolean
  signal?: AbortSignal
  /** Run the attempts elsewhere: `queueRunner(...)` (fan-out across machines). */
  runner?: CandidateRunner
}

/**
 * `forkpoint explore`: best-of-N over a command, each attempt sandboxed in its own branch
 * of the workspace; the highest-scoring success is committed.
 * @throws {PatternCancelledError} @throws {ConflictError} @throws {SandboxError}
 */
export async function exploreCommand({
  dir = process.cwd(),
  store,
  cmd,
  n = 4,
  score,
  maxParallel,
  timeout,
  net = 'none',
  isolate = true,
  signal,
  runner,
}: ExploreCommandArgs): Promise<Outcome<CommandValue>> {
  const ws = await Workspace.open({ dir, store })
  const task = { cmd, net, ...(score === undefined ? {} : { score }) }
  return bestOfN<CommandValue>(task, {
    n,
    isolate,
    ...(runner ? { runner } : {}),
    ...(maxParallel === undefined ? {} : { maxParallel }),
    ...(timeout === undefined ? {} : { timeout }),
  }).apply(ws, signal ? { signal } : {})
}
