import { Command, CommanderError } from 'commander'
import { ExitCode, isForkpointError } from '../errors/index.js'
import { commands } from './commands/index.js'
import { common } from './context.js'
import { RestartWithExtraCaCerts, rerunWithExtraCaCerts, restoreExtraCaCerts } from './extraCaCerts.js'

/**
 * The only place that exits. Commands throw; a ForkpointError exits with its own code
 * and one line on stderr (its JSON under --json); anything else is a bug: exit 6 with
 * the stack.
 */
export async function main(argv: string[]): Promise<number> {
  restoreExtraCaCerts()
  const program = common(new Command('forkpoint'))
    .description('fork() for AI agents: snapshot, branch, explore, merge, record, replay, diff, ship')
    .version(process.env['npm_package_version'] ?? '0.1.0')
    .exitOverride()
    .showSuggestionAfterError()
  // `-C DIR` means "as if started in DIR" (as git's does), so every relative path on the line resolves there
  program.hook('preAction', (_program, action) => {
    const dir = (action.optsWithGlobals() as { dir?: string }).dir
    if (dir) process.chdir(dir)
  })
  for (const register of commands) register(program)
  try {
    await program.parseAsync(argv)
    return Number(process.exitCode ?? 0)
  } catch (err) {
    if (err instanceof RestartWithExtraCaCerts) return rerunWithExtraCaCerts()
    return report(err, argv.includes('--json'))
  }
}

function report(err: unknown, json: boolean): number {
  if (err instanceof CommanderError) {
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return 0
    return ExitCode.usage // commander already printed its one line
  }
  if (isForkpointError(err)) {
    process.stderr.write(json ? `${JSON.stringify(err.toJSON())}\n` : `forkpoint: ${err.message}\n`)
    return err.exitCode
  }
  process.stderr.write(`forkpoint: internal error (please report): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  return ExitCode.internal
}

