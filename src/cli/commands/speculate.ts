import type { Command } from 'commander'
import type { CommandValue } from '../../patterns/runCandidate.js'
import type { Outcome } from '../../patterns/types.js'
import { type Where, common, commonFlags } from '../context.js'
import { outcomeView } from '../outcomeTable.js'
import { print } from '../output.js'
import { cancelOnSignals, type PatternFlags, patternFlags, runnerFlags, withPatternOptions } from '../patternFlags.js'

/** `forkpoint speculate`: the commands raced in parallel branches; the first to exit 0 is committed. */
export async function speculateCommand({
  dir,
  store,
  command,
  signal,
  json = false,
  ...flags
}: Where & PatternFlags & { command: string[]; signal?: AbortSignal; json?: boolean }): Promise<Outcome<CommandValue>> {
  const { speculateCommands } = await import('../../patterns/speculateCommands.js')
  return speculateCommands({ dir, store, commands: command, ...patternFlags(flags), ...(await runnerFlags(flags, json)), ...(signal ? { signal } : {}) })
}

export function registerSpeculate(program: Command): void {
  withPatternOptions(common(program.command('speculate')))
    .description('run commands in parallel branches; the first to exit 0 is committed, the others are killed and thrown away')
    .requiredOption('-c, --command <cmd>', 'a candidate command line (repeat for each candidate)', (v: string, all: string[] = []) => [...all, v])
    .action(async (opts: PatternFlags & { command: string[] }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await cancelOnSignals((signal) => speculateCommand({ dir: flags.dir, store: flags.store, ...opts, signal, json: flags.json })), outcomeView)
    })
}
