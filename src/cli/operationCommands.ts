import { once } from 'node:events'
import { type Command, Option } from 'commander'
import { z } from 'zod'
import { UsageError } from '../errors/index.js'
import type { AnyOperation, CliForm } from '../operations/operation.js'
import type { ByteSink } from '../operations/rendering.js'
import { runOperation } from '../operations/runOperation.js'
import { common, commonFlags } from './context.js'
import { print } from './output.js'
import { pauseAtFromEnv } from './pauseAt.js'
import { progressBar } from './progress.js'
import { transferBar } from './transferBar.js'

type Generated = AnyOperation & { cli: CliForm<AnyOperation['input'], object> }

/** A field's JSON Schema, as much of it as makes a flag. */
interface FieldSchema {
  type?: string
  enum?: string[]
  const?: unknown
  items?: { type?: string }
  anyOf?: FieldSchema[]
  description?: string
}

/**
 * The commands of the operations the table gives a command-line form: one command per
 * `usage`, its positional arguments and flags made from the input schema, the operations
 * that share the words told apart by their `selectedBy` flag (`commit NAME --abort`).
 */
export function registerOperationCommands(program: Command, table: readonly AnyOperation[]): void {
  const byUsage = new Map<string, Generated[]>()
  for (const op of table.filter(hasCommandLine)) byUsage.set(op.cli.usage, [...(byUsage.get(op.cli.usage) ?? []), op])
  // a command before its subcommands (`runs` before `runs show <run>`), so that the subcommands find it
  const usages = [...byUsage.keys()].sort((a, b) => wordsOf(a).length - wordsOf(b).length)
  for (const usage of usages) registerCommand(program, usage, byUsage.get(usage)!)
}

/**
 * The command of `usage` under the commands of its first words (`runs show <run>` under
 * `runs`), each taken as it is when another usage made it already, else a group.
 */
function commandOf(program: Command, usage: string): Command {
  const words = wordsOf(usage)
  const parent = words.slice(0, -1).reduce((cmd, word) => cmd.commands.find((c) => c.name() === word) ?? common(cmd.command(word)), program)
  const ownWordAndArguments = usage.split(' ').slice(words.length - 1)
  return parent.command(ownWordAndArguments.join(' '))
}

/** Whether a positional argument was given: commander passes a variadic one left out as []. */
function isGiven(value: unknown): boolean {
  return value !== undefined && !(Array.isArray(value) && value.length === 0)
}

function hasCommandLine(op: AnyOperation): op is Generated {
  return op.cli !== undefined
}

function registerCommand(program: Command, usage: string, ops: Generated[]): void {
  const main = ops.find((op) => op.cli.selectedBy === undefined && !op.cli.withoutArguments) ?? ops[0]!
  const bare = ops.find((op) => op.cli.withoutArguments)
  const positionals = positionalFields(usage)
  const cmd = common(commandOf(program, usage))
    .description(lowerFirst(main.description) + (bare && bare !== main ? ` Without arguments: ${lowerFirst(bare.description)}` : ''))
    .summary(lowerFirst(firstSentence(main.description)))
  const flagged = new Map<string, FieldSchema>()
  for (const op of ops) for (const [field, schema] of Object.entries(fieldSchemas(op))) if (!positionals.includes(field)) flagged.set(field, schema)
  for (const [field, schema] of flagged) {
    cmd.addOption(flagOption(field, schema, ops))
    if (ops.some((op) => op.cli.negatable?.includes(field))) cmd.addOption(new Option(`--no-${kebab(field)}`, `the opposite of --${kebab(field)}`))
  }
  for (const op of ops) {
    const selector = selectorOf(op)
    if (selector) cmd.addOption(new Option(`${selector.short ? `-${selector.short}, ` : ''}--${selector.flag}`, lowerFirst(op.description)))
  }
  cmd.action(async (...values: unknown[]) => {
    const command = values[values.length - 1] as Command
    const given = command.opts<Record<string, unknown>>()
    const named = positionals.filter((_, i) => isGiven(values[i]))
    const op = selected(ops, given, named.length > 0, usage)
    const args: Record<string, unknown> = {}
    positionals.forEach((field, i) => isGiven(values[i]) && (args[field] = values[i]))
    for (const field of named) if (!(field in op.input)) throw misplaced(usage, op, `<${field}>`, owners(ops, field))
    const missing = positionals.find((field) => isRequired(op, field) && !named.includes(field))
    if (missing) throw notGiven(usage, op, `<${missing}>`, ops)
    for (const field of flagged.keys()) {
      if (given[field] === undefined) continue
      if (!(field in op.input)) throw misplaced(usage, op, `--${kebab(field)}`, owners(ops, field))
      args[field] = given[field]
    }
    await runCommand(op, args, command)
  })
}

/** The flag that selects an operation among the others of its words, if one does. */
function selectorOf(op: Generated): { flag: string; short?: string } | null {
  const by = op.cli.selectedBy
  return by === undefined ? null : typeof by === 'string' ? { flag: by } : by
}

/**
 * A positional argument left out that the operation needs: the usage error naming it and,
 * for the operation selected by no flag (`merge` alone), the flags that go without it.
 */
function notGiven(usage: string, op: Generated, argument: string, ops: Generated[]): UsageError {
  const selector = selectorOf(op)
  if (selector) return new UsageError(`${commandWords(usage)} --${selector.flag}: give ${argument}`, { option: argument })
  const others = ops.flatMap((other) => selectorOf(other)?.flag ?? []).map((flag) => `--${flag}`)
  return new UsageError(`${commandWords(usage)}: give ${[argument, ...others].join(', ').replace(/, ([^,]*)$/, ' or $1')}`, { option: argument })
}

/** An argument the selected operation does not take (`tag -d NAME ID`), and the flags of the operations that do take it. */
function misplaced(usage: string, op: Generated, argument: string, takenWith: string[]): UsageError {
  const selector = selectorOf(op)
  const what = selector ? `with --${selector.flag}` : op.cli.withoutArguments ? 'without arguments' : 'with this command'
  const where = takenWith.length > 0 ? ` (it goes with ${takenWith.join(' or ')})` : ''
  return new UsageError(`${commandWords(usage)}: ${argument} does not go ${what}${where}`, { option: argument })
}

/** The selecting flags of the operations that take `field`. */
function owners(ops: Generated[], field: string): string[] {
  return ops.flatMap((op) => (field in op.input ? [selectorOf(op)?.flag] : [])).flatMap((flag) => (flag ? [`--${flag}`] : []))
}

async function runCommand(op: Generated, args: Record<string, unknown>, command: Command): Promise<void> {
  const flags = commonFlags(command)
  const where = { dir: flags.dir, ...(flags.store ? { store: flags.store } : {}) }
  if (op.cli.served?.(args)) {
    const { callService } = await import('../service/callService.js')
    const answered = await callService(where, op.name, args)
    if (answered) return print(flags, answered, op.cli.rendering, args)
  }
  const out = flags.json ? null : stdoutSink()
  const streamed = out && (await op.cli.bytes?.instead?.(where, args, out))
  if (typeof streamed === 'number') return void (process.exitCode = streamed)
  const bar = progressOf(op.cli.progress, flags.json)
  const cancel = new AbortController()
  const context = {
    signal: cancel.signal,
    policy: null,
    env: process.env,
    onProgress: bar?.onProgress,
    notice: (line: string) =>
      process.stderr.write(`forkpoint: ${line}
`),
    onStep: pauseAtFromEnv(process.env),
    terminal: op.cli.terminal ? (flags.json ? ('stderr' as const) : ('stdout' as const)) : undefined,
  }
  const result = await cancelledBySignals(op.cli.cancelOnSignals ? cancel : null, () => runOperation(op, where, args, context)).finally(() => bar?.stop())
  const written = out && (await op.cli.bytes?.after?.(where, result, out))
  if (typeof written === 'number') return void (process.exitCode = written)
  print(flags, result, op.cli.rendering, args)
}

/** While `work` runs, SIGINT and SIGTERM abort `cancel` instead of ending the process; with no controller, `work` alone. */
async function cancelledBySignals<T>(cancel: AbortController | null, work: () => Promise<T>): Promise<T> {
  if (cancel === null) return work()
  const abort = () => cancel.abort()
  process.once('SIGINT', abort)
  process.once('SIGTERM', abort)
  try {
    return await work()
  } finally {
    process.off('SIGINT', abort)
    process.off('SIGTERM', abort)
  }
}

/** The progress a form asks for on stderr: a bar on a terminal, or lines (nothing under --json). */
function progressOf(progress: CliForm<AnyOperation['input'], object>['progress'], json: boolean): { onProgress?: ((progress: object) => void) | undefined; stop(): void } | null {
  if (progress === undefined) return null
  if (progress === 'lines') return json ? null : { onProgress: (p: object) => process.stderr.write(`${(p as { line: string }).line}\n`), stop: () => undefined }
  if (progress === 'transfer') return transferBar(json) as { onProgress?: (progress: object) => void; stop(): void }
  const bar = progressBar(progress.label, json)
  return { stop: () => bar.stop(), onProgress: bar.onProgress && ((p: object) => bar.onProgress!((p as { done: number }).done, (p as { total: number }).total)) }
}

/** stdout as a sink that waits for it to drain. */
function stdoutSink(): ByteSink {
  return {
    terminal: process.stdout.isTTY === true,
    write: async (chunk) => {
      if (!process.stdout.write(chunk)) await once(process.stdout, 'drain')
    },
  }
}

/**
 * The operation the arguments select: the one whose `selectedBy` flag is given, else the one
 * `withoutArguments` when no positional argument is, else the one selected by neither.
 */
function selected(ops: Generated[], given: Record<string, unknown>, positional: boolean, usage: string): Generated {
  const chosen = ops.filter((op) => given[selectorOf(op)?.flag ?? ''] === true)
  if (chosen.length > 1) throw new UsageError(`${commandWords(usage)}: give ${chosen.map((op) => `--${selectorOf(op)!.flag}`).join(' or ')}, not both`)
  const unflagged = ops.filter((op) => selectorOf(op) === null)
  const op = chosen[0] ?? (positional ? undefined : ops.find((op) => op.cli.withoutArguments)) ?? unflagged.find((op) => !op.cli.withoutArguments)
  if (!op)
    throw new UsageError(
      `${commandWords(usage)}: give ${ops
        .flatMap((op) => selectorOf(op)?.flag ?? [])
        .map((flag) => `--${flag}`)
        .join(' or ')}`,
    )
  return op
}

/** The input fields `usage` takes as positional arguments, in order: `<id>`, `[b]`, `[paths...]`. */
function positionalFields(usage: string): string[] {
  return [...usage.matchAll(/[<[]([a-zA-Z]+)(?:\.\.\.)?[>\]]/g)].map((m) => m[1]!)
}

function commandWords(usage: string): string {
  return usage.split(/ [<[]/)[0]!
}

/** The command's words of `usage`, its arguments left out: `runs show <run>` is `runs`, `show`. */
function wordsOf(usage: string): string[] {
  return commandWords(usage).split(' ')
}

function fieldSchemas(op: AnyOperation): Record<string, FieldSchema> {
  return (z.toJSONSchema(z.object(op.input), { io: 'input' }) as { properties?: Record<string, FieldSchema> }).properties ?? {}
}

/**
 * A field as a flag: `--kebab-case`, a value for all but booleans, numbers read as numbers,
 * an array's values repeatable (numbers also comma-separated: `--weights 1,2`). A field that
 * takes `true` or a value is a flag whose value may be left out (`--find-renames [n]`).
 */
function flagOption(field: string, schema: FieldSchema, ops: Generated[]): Option {
  const letter = ops.map((op) => (op.cli.short as Record<string, string> | undefined)?.[field]).find(Boolean)
  const valueOrTrue = schema.anyOf?.some((s) => s.const === true) ? schema.anyOf.find((s) => s.const !== true) : undefined
  const type = valueOrTrue?.type ?? (schema.type === 'array' ? schema.items?.type : schema.type)
  const numeric = type === 'integer' || type === 'number'
  const name = numeric ? (schema.type === 'array' ? 'n,...' : 'n') : kebab(field)
  const value = type === 'boolean' ? '' : valueOrTrue ? ` [${name}]` : ` <${name}>`
  const option = new Option(`${letter ? `-${letter}, ` : ''}--${kebab(field)}${value}`, schema.description ?? '')
  if (schema.enum) option.choices(schema.enum)
  if (numeric) option.argParser(asNumber)
  if (schema.type === 'array') option.argParser((v: string, list: unknown[] | undefined) => [...(list ?? []), ...(numeric ? v.split(',').map(asNumber) : [v])])
  if (ops.every((op) => isRequired(op, field))) option.makeOptionMandatory()
  return option
}

/** A flag's value as a number: NaN (refused by the schema, naming the field) for one that is not. */
function asNumber(value: string): number {
  return value.trim() === '' ? Number.NaN : Number(value)
}

function isRequired(op: AnyOperation, field: string): boolean {
  const schema = op.input[field]
  return schema !== undefined && !z.safeParse(schema, undefined).success
}

function kebab(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)
}

function firstSentence(text: string): string {
  return /^.*?[.;:](?=\s|$)/.exec(text)?.[0].slice(0, -1) ?? text
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1)
}
