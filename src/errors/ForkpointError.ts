/**
 * The one base of every error forkpoint throws on purpose. Each subclass carries a
 * stable `code` (its class name) and the process exit code from DESIGN.md.
 */
export const ExitCode = {
  ok: 0,
  difference: 1,
  usage: 2,
  conflict: 3,
  offline: 4,
  corrupt: 5,
  internal: 6,
} as const
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

/** The data of an error that carries none. */
export type NoData = Record<string, never>

/** A constructor's `data` argument: required when the class's data has a required field. */
// `{} extends Data` is how TypeScript asks "are all of Data's fields optional?"
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export type DataArgs<Data> = {} extends Data ? [data?: Data, options?: { cause?: unknown }] : [data: Data, options?: { cause?: unknown }]

/** `Data`: the facts this class of error carries, one type per class (see each class). */
export abstract class ForkpointError<Data extends object = NoData> extends Error {
  abstract readonly exitCode: ExitCode
  readonly data: Data

  constructor(message: string, ...[data, options]: DataArgs<Data>) {
    super(message, options)
    this.name = new.target.name
    this.data = data ?? ({} as Data)
  }

  get code(): string {
    return this.name
  }

  toJSON(): { error: { code: string; exitCode: number; message: string; data: Data } } {
    return { error: { code: this.code, exitCode: this.exitCode, message: this.message, data: this.data } }
  }
}

/** What a bad argument or setting was: the option or thing named, and the value given. */
export interface UsageErrorData {
  /** The option or setting, when the value alone does not say. */
  option?: string
  value?: string | number
  /** A name, spec, path or file the user gave. */
  name?: string
  spec?: string
  path?: string
  file?: string
  ref?: string
  into?: string
  entrypoint?: string
  command?: string | string[]
  tool?: string
  backend?: string
  pattern?: string
  rule?: string
  /** Images a merge could not relate. */
  ours?: string
  theirs?: string
  /** A command-line parser's own error code. */
  parserCode?: string
  /** A command task's exit status or output that did not give a score. */
  exitCode?: number
  stdout?: string
}

/** Bad arguments, missing configuration, a store that is not there. */
export class UsageError<Data extends object = UsageErrorData> extends ForkpointError<Data> {
  readonly exitCode = ExitCode.usage
}

/** A state that should be impossible: a bug in forkpoint. `data.cause`: the underlying error's message. */
export class InternalError extends ForkpointError<{ cause?: string }> {
  readonly exitCode = ExitCode.internal
}

/** Data that cannot be trusted: bad digest, malformed object or artifact, unsafe path. */
export class CorruptDataError<Data extends object = { path?: string }> extends ForkpointError<Data> {
  readonly exitCode = ExitCode.corrupt
}

export function isForkpointError(err: unknown): err is ForkpointError {
  return err instanceof ForkpointError
}
