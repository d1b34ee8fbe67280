import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { formatOutcome } from '../outcomeTable.js'
import { emit } from '../output.js'
import { cancelOnSignals, type PatternFlags, patternFlags, withPatternOptions } from '../patternFlags.js'

export function registerExplore(program: Command): void {
  withPatternOptions(common(program.command('explore')))
    .description('best-of-N: run a command N times in parallel branches (FORKPOINT_ATTEMPT=0..N-1) and commit the best success')
    .argument('<command...>', 'the command (after --); one argument is a shell command line')
    .option('-n, --attempts <n>', 'how many attempts', '4')
    .option('--score <cmd>', 'run in each finished branch; prints a number, higher is better (default: exit 0 = 1, else 0)')
    .action(async (command: string[], opts: PatternFlags & { attempts: string; score?: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { exploreCommand } = await import('../../patterns/exploreCommand.js')
      const outcome = await cancelOnSignals((signal) =>
        exploreCommand({ dir: flags.dir, store: flags.store, cmd: command.length === 1 ? command[0]! : command, n: Number(opts.attempts), ...(opts.score ? { score: opts.score } : {}), ...patternFlags(opts), signal }),
      )
      emit(flags, outcome, formatOutcome)
      if (!outcome.committed) process.exitCode = 1
    })
}
