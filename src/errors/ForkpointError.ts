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

export abstract class ForkpointError extends Error {
  abstract readonly exitCode: ExitCode
  readonly data: Record<string, unknown>

  constructor(message: string, data: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options)
    this.name = new.target.name
    this.data = data
  }

  get code(): string {
    return this.name
  }

  toJSON(): { error: { code: string; exitCode: number; message: string; data: Record<string, unknown> } } {
    return { error: { code: this.code, exitCode: this.exitCode, message: this.message, data: this.data } }
  }
}

/** Bad arguments, missing configuration, a store that is not there. */
export class UsageError extends ForkpointError {
  readonly exitCode = ExitCode.usage
}

/** A state that should be impossible: a bug in forkpoint. */
export class InternalError extends ForkpointError {
  readonly exitCode = ExitCode.internal
}

/** Data that cannot be trusted: bad digest, malformed object or artifact, unsafe path. */
export class CorruptDataError extends ForkpointError {
  readonly exitCode = ExitCode.corrupt
}

export function isForkpointError(err: unknown): err is ForkpointError {
  return err instanceof ForkpointError
}
