import { Workspace } from '../branch/Workspace.js'
import type { CommandValue } from './runCandidate.js'
import { type CommandPatternArgs, commandPatternOptions } from './commandPatternArgs.js'
import { speculate } from './speculate.js'
import type { Outcome } from './types.js'

export interface SpeculateCommandsArgs extends CommandPatternArgs {
  /** Shell command lines, one per candidate. */
  commands: string[]
}

/**
 * `forkpoint speculate`: run the commands in parallel branches of the workspace; the first
 * to exit 0 is committed and the others are killed and aborted.
 * @throws {PatternCancelledError} @throws {ConflictError} @throws {SandboxError}
 */
export async function speculateCommands(args: SpeculateCommandsArgs): Promise<Outcome<CommandValue>> {
  const { dir = process.cwd(), store, commands, net = 'none', signal } = args
  const ws = await Workspace.open({ dir, store })
  const candidates = commands.map((cmd) => ({ cmd, net }))
  return speculate<CommandValue>(candidates, commandPatternOptions(args)).apply(ws, signal ? { signal } : {})
}
