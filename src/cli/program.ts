import { Command, CommanderError } from 'commander'
import { ExitCode, InputNotFoundError, UsageError, isForkpointError } from '../errors/index.js'
import { errnoCode } from '../util/fsx.js'
import { commands } from './commands/index.js'
import { common } from './context.js'
import { allowSafeDirectories } from './safeDirectories.js'
import { packageVersion } from '../util/ownPackage.js'
import { colorsWanted, useColors } from '../operations/text/colors.js'

/**
 * The only place that exits. Commands throw; a ForkpointError exits with its own code
 * and one line on stderr (its JSON under --json); the option parser's errors are usage
 * errors like any other; anything else is a bug: exit 6 with the stack.
 */
export async function main(argv: string[]): Promise<number> {
  allowSafeDirectories(process.env)
  useColors(colorsWanted(process.env, process.stdout))
  const program = common(new Command('forkpoint'))
    .description('fork() for AI agents: snapshot, branch, explore, merge, record, replay, diff, ship')
    .version(packageVersion())
    .exitOverride()
    .showSuggestionAfterError()
    // the parser's error lines (and the help it shows for a missing subcommand) are `report`'s to print
    .configureOutput({ writeErr: () => undefined, outputError: () => undefined })
  // the command being parsed, for the error of one given without its subcommand
  let parsing = program
  program.hook('preSubcommand', (_parent, sub) => {
    parsing = sub
  })
  // `-C DIR` means "as if started in DIR" (as git's does), so every relative path on the line resolves there
  program.hook('preAction', (_program, action) => {
    const dir = action.optsWithGlobals<{ dir?: string }>().dir
    if (dir) enterDir(dir)
  })
  for (const register of commands) register(program)
  // the table and its commands' maker (and zod with them) load only for the table's commands, help, or a word no command has
  if (needsTable(program, argv)) await registerTable(program)
  try {
    await program.parseAsync(argv)
    return Number(process.exitCode ?? 0)
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : report(parserError(err, parsing), argv.includes('--json'))
    return report(err, argv.includes('--json'))
  }
}

async function registerTable(program: Command): Promise<void> {
  const [{ registerOperationCommands }, { OPERATIONS }] = await Promise.all([import('./operationCommands.js'), import('../operations/table.js')])
  registerOperationCommands(program, OPERATIONS)
}

/** Options of the program that take a value, so that the value is not taken for the command's name. */
const VALUED = new Set(['-C', '--dir', '--store'])

/** Whether the line needs the operation table: it names none of the commands of their own, and does not only ask the version. */
function needsTable(program: Command, argv: string[]): boolean {
  const words = argv.slice(2)
  const word = words.find((w, i) => !w.startsWith('-') && !VALUED.has(words[i - 1] ?? ''))
  if (word === undefined) return !words.some((w) => w === '-V' || w === '--version')
  return !program.commands.some((c) => c.name() === word)
}

function enterDir(dir: string): void {
  try {
    process.chdir(dir)
  } catch (err) {
    const code = errnoCode(err)
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new InputNotFoundError(`-C ${dir}: no such directory`, { path: dir })
    throw new UsageError(`-C ${dir}: cannot work there (${code ?? String(err)})`, { path: dir })
  }
}

/** What the option parser refused, as one line: commander's own words, or the subcommands a command group offers. */
function parserError(err: CommanderError, parsing: Command): UsageError {
  if (err.code !== 'commander.help') return new UsageError(err.message.replace(/^error: /, '').replaceAll('\n', ' '), { parserCode: err.code })
  if (!parsing.parent) return new UsageError(`a command is needed (see 'forkpoint --help')`, { parserCode: err.code })
  const path = `forkpoint ${parsing.name()}`
  return new UsageError(`'${path}' needs a subcommand: ${parsing.commands.map((c) => c.name()).join(', ')} (see '${path} --help')`, { parserCode: err.code })
}

function report(err: unknown, json: boolean): number {
  if (isForkpointError(err)) {
    process.stderr.write(json ? `${JSON.stringify(err.toJSON())}\n` : `forkpoint: ${err.message}\n`)
    return err.exitCode
  }
  process.stderr.write(`forkpoint: internal error (please report): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  return ExitCode.internal
}
