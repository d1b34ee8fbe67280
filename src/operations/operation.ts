import type { z } from 'zod'
import type { StoreLocator } from '../store/findStore.js'
import type { StepHook } from '../effects/stepHook.js'
import type { ImageCache } from '../image/imageGraph.js'
import type { WorldScanner } from '../world/scan/snapshotWorkspace.js'
import type { ByteSink, Rendering } from './rendering.js'
import type { RequestPolicy } from './requestPolicy.js'
import type { AgentStdout } from '../trace/record/spawnAgent.js'

/** Where an operation is offered: the command line, the HTTP service (and its OpenAPI document), the MCP server. */
export type Surface = 'cli' | 'http' | 'mcp'

/** What an operation does to the store and the workspace, as MCP's tool annotations say it. */
export interface Annotations {
  /** changes nothing */
  readOnly: boolean
  /** may discard what was there (uncommitted files, a branch, a ref) */
  destructive: boolean
  /** the same call twice leaves what one leaves */
  idempotent: boolean
}

/** What an operation gets besides its arguments: the caller's cancel, what requests may reach, where to report progress, and the service's warm scanner. */
export interface OperationContext {
  signal: AbortSignal
  /** what a remote caller's request may reach; null on the command line, whose caller owns the machine already */
  policy: RequestPolicy | null
  onProgress?: ((progress: object) => void) | undefined
  scanner?: WorldScanner | undefined
  /** the environment the edge was started with: keys (`FORKPOINT_KEY`, `FORKPOINT_SIGNING_KEY`) and what a command run inherits */
  env: NodeJS.ProcessEnv
  /** where a line for the caller goes that is not the result (the command line's stderr) */
  notice?: ((line: string) => void) | undefined
  /** the service's cache of immutable objects the web view's queries read */
  cache?: ImageCache | undefined
  /** told each durable step of a commit (a crash test stops the process there) */
  onStep?: StepHook | undefined
  /**
   * the caller's terminal, where a command the operation runs writes its stdout as it goes
   * (the command line's): `stdout`, or `stderr` when stdout carries the result (--json);
   * absent, the operation captures what the command writes into its result
   */
  terminal?: 'stdout' | 'stderr' | undefined
}

/** Where an agent an operation starts writes its stdout: the caller's terminal as the context says, else captured into the result. */
export function agentStdoutFor(terminal: OperationContext['terminal']): AgentStdout {
  return terminal === undefined ? 'capture' : terminal === 'stdout' ? 'inherit' : 'stderr'
}

/** How the command line offers an operation: its words and positional arguments, short flags, progress bar. */
export interface CliForm<Input extends z.ZodRawShape, Result> {
  /**
   * commander's command line: the words, then the positional arguments by input field
   * (`<id>` required, `[b]` optional, `[paths...]` the rest); every other field is a flag,
   * `--kebab-case` of its name.
   */
  usage: string
  /** fields that also have a `--no-` flag, giving false: left out, the operation decides (as the last snapshot did) */
  negatable?: ReadonlyArray<keyof Input & string>
  /** one-letter flags, by field */
  short?: { [K in keyof Input]?: string }
  /** the flag that selects this operation among the others of the same words (`commit NAME --continue`), with its letter when it has one (`tag -d`) */
  selectedBy?: string | { flag: string; short: string }
  /** selects this operation among the others of the same words when no positional argument is given (`tag` alone lists) */
  withoutArguments?: true
  /** whether the store's running service answers these arguments in its place (its watcher knows the workspace warm) */
  served?: (args: z.infer<z.ZodObject<Input>>) => boolean
  /** a command the operation runs writes to the caller's terminal as it goes (on stderr under --json), not into the result: the context's `terminal` */
  terminal?: true
  /**
   * What the command line shows of the progress it is told: a bar of counted steps, with its
   * label, or of a transfer's bytes, drawn on a terminal; or `lines`, each `{ line }` written
   * to stderr (never under --json)
   */
  progress?: { label: string } | 'transfer' | 'lines'
  /** Ctrl-C and SIGTERM cancel the operation through its signal (its work ended, its branches aborted) rather than end forkpoint mid-way */
  cancelOnSignals?: true
  rendering: Rendering<Result, z.infer<z.ZodObject<Input>>>
  /**
   * Bytes written as they come rather than a rendering (never under --json): `instead` runs
   * in place of the operation (a patch written as it is made), `after` writes a result's
   * content (a file's bytes as stored). Each gives the exit code once it wrote the answer,
   * or null to go on as without it.
   */
  bytes?: {
    instead?(where: StoreLocator, args: z.infer<z.ZodObject<Input>>, out: ByteSink): Promise<number | null>
    after?(where: StoreLocator, result: Result, out: ByteSink): Promise<number | null>
  }
}

/**
 * One operation, declared once: commander, the HTTP service, its OpenAPI document and the
 * MCP server are made from it. Fields named in `local` exist on the command line only
 * (they name the caller's own files or environment); `surfaces` names where it is offered
 * when that is not everywhere, with the reason.
 */
export interface Operation<Input extends z.ZodRawShape = z.ZodRawShape, Output extends z.ZodType<object> = z.ZodType<object>> {
  name: string
  description: string
  input: Input
  output: Output
  annotations: Annotations
  local?: { fields: ReadonlyArray<keyof Input & string>; why: string }
  surfaces?: { only: readonly Surface[]; why: string }
  /** a read the web view makes: `GET /v1/view/<name>`, its arguments query parameters */
  query?: true
  /** how the command line offers it; absent only when `surfaces` leaves the command line out */
  cli?: CliForm<Input, z.infer<Output>>
  run(where: StoreLocator, args: z.infer<z.ZodObject<Input>>, ctx: OperationContext): Promise<z.infer<Output>>
}

/** An operation of any arguments and result, as the surfaces hold them. */
export type AnyOperation = Operation<z.ZodRawShape, z.ZodType<object>>

/** An operation as declared, its handler's arguments and result typed by its schemas. */
export function defineOperation<Input extends z.ZodRawShape, Output extends z.ZodType<object>>(op: Operation<Input, Output>): AnyOperation {
  return op as unknown as AnyOperation
}

/** Whether an operation is offered on a surface. */
export function offeredOn(op: AnyOperation, surface: Surface): boolean {
  return op.surfaces === undefined || op.surfaces.only.includes(surface)
}

/** The input fields a remote caller (HTTP, MCP) may give: all but the local ones. */
export function remoteInput(op: AnyOperation): z.ZodRawShape {
  const local = new Set<string>(op.local?.fields ?? [])
  return Object.fromEntries(Object.entries(op.input).filter(([field]) => !local.has(field)))
}
