import type { StoreLocator } from '../store/findStore.js'
import { Workspace } from '../branch/Workspace.js'
import type { NetMode } from '../sandbox/runSandboxed.js'
import type { CommandValue } from './runCandidate.js'
import type { CandidateRunner } from './runCandidates.js'
import { speculate } from './speculate.js'
import type { Outcome } from './types.js'

export interface SpeculateCommandsArgs extends StoreLocator {
  /** Shell command lines, one per candidate. */
  commands: string[]
  maxParallel?: number
  timeout?: number | string
  net?: NetMode
  isolate?: boolean
  signal?: AbortSignal
  /** Run the attempts elsewhere: `queueRunner(...)` (fan-out across machines). */
  runner?: CandidateRunner
}

/**
 * `forkpoint speculate`: run the commands in parallel branches of the workspace; the first
 * to exit 0 is committed and the others are killed and aborted.
 * @throws {PatternCancelledError} @throws {ConflictError} @throws {SandboxError}
 */
export async function speculateCommands({
  dir = process.cwd(),
  store,
  commands,
  maxParallel,
  timeout,
  net = 'none',
  isolate = true,
  signal,
  runner,
}: SpeculateCommandsArgs): Promise<Outcome<CommandValue>> {
  const ws = await Workspace.open({ dir, store })
  const candidates = commands.map((cmd) => ({ cmd, net }))
  return speculate<CommandValue>(candidates, {
    isolate,
    ...(runner ? { runner } : {}),
    ...(maxParallel === undefined ? {} : { maxParallel }),
    ...(timeout === undefined ? {} : { timeout }),
  }).apply(ws, signal ? { signal } : {})
}
