import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { formatOutcome } from '../outcomeTable.js'
import { emit } from '../output.js'
import { cancelOnSignals, type PatternFlags, patternFlags, withPatternOptions } from '../patternFlags.js'

export function registerSpeculate(program: Command): void {
  withPatternOptions(common(program.command('speculate')))
    .description('run commands in parallel branches; the first to exit 0 is committed, the others are killed and thrown away')
    .requiredOption('-c, --command <cmd>', 'a candidate command line (repeat for each candidate)', (v: string, all: string[] = []) => [...all, v])
    .action(async (opts: PatternFlags & { command: string[] }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { speculateCommands } = await import('../../patterns/speculateCommands.js')
      const outcome = await cancelOnSignals((signal) => speculateCommands({ dir: flags.dir, store: flags.store, commands: opts.command, ...patternFlags(opts), signal }))
      emit(flags, outcome, formatOutcome)
      if (!outcome.committed) process.exitCode = 1
    })
}
