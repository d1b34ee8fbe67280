import type { StoreLocator } from '../store/findStore.js'
import { Workspace } from '../branch/Workspace.js'
import type { NetMode } from '../sandbox/runSandboxed.js'
import type { CommandValue } from './runCandidate.js'
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
}: SpeculateCommandsArgs): Promise<Outcome<CommandValue>> {
  const ws = await Workspace.open({ dir, store })
  const candidates = commands.map((cmd) => ({ cmd, net }))
  return speculate<CommandValue>(candidates, { isolate, ...(maxParallel === undefined ? {} : { maxParallel }), ...(timeout === undefined ? {} : { timeout }) }).apply(
    ws,
    signal ? { signal } : {},
  )
}
