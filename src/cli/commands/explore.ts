import type { Command } from 'commander'
import type { CommandValue } from '../../patterns/runCandidate.js'
import type { Outcome } from '../../patterns/types.js'
import { type Where, common, commonFlags } from '../context.js'
import { outcomeView } from '../outcomeTable.js'
import { print } from '../output.js'
import { cancelOnSignals, type PatternFlags, patternFlags, runnerFlags, withPatternOptions } from '../patternFlags.js'

export interface ExploreOptions extends Where, PatternFlags {
  /** the command: one argument is a shell command line */
  command: string[]
  attempts: string | number
  score?: string
  signal?: AbortSignal
  /** stdout carries JSON only: no progress lines. */
  json?: boolean
}

/** `forkpoint explore`: best-of-N, the command run N times in parallel branches and the best success committed. */
export async function exploreCommand({ dir, store, command, attempts, score, signal, json = false, ...flags }: ExploreOptions): Promise<Outcome<CommandValue>> {
  const { exploreCommand: explore } = await import('../../patterns/exploreCommand.js')
  return explore({
    dir,
    store,
    cmd: command.length === 1 ? command[0]! : command,
    n: Number(attempts),
    ...(score ? { score } : {}),
    ...patternFlags(flags),
    ...(await runnerFlags(flags, json)),
    ...(signal ? { signal } : {}),
  })
}

export function registerExplore(program: Command): void {
  withPatternOptions(common(program.command('explore')))
    .description('best-of-N: run a command N times in parallel branches (FORKPOINT_ATTEMPT=0..N-1) and commit the best success')
    .argument('<command...>', 'the command (after --); one argument is a shell command line')
    .option('-n, --attempts <n>', 'how many attempts', '4')
    .option('--score <cmd>', 'run in each finished branch; prints a number, higher is better (default: exit 0 = 1, else 0)')
    .action(async (command: string[], opts: PatternFlags & { attempts: string; score?: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await cancelOnSignals((signal) => exploreCommand({ dir: flags.dir, store: flags.store, command, ...opts, signal, json: flags.json })), outcomeView)
    })
}
