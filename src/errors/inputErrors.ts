import { ExitCode, ForkpointError, UsageError } from './ForkpointError.js'

/** A file or directory the user named (a pack file, `-C DIR`) is not there (`data.path`). */
export class InputNotFoundError extends UsageError<{ path: string }> {}

/**
 * An operation the service (`forkpoint serve`) ran failed: the error it answered with,
 * under its own code, exit code and data, so a CLI that asked the service prints and
 * exits as if it had run the operation itself.
 */
export class ServiceOperationError extends ForkpointError<object> {
  readonly exitCode: ExitCode
  readonly #code: string

  constructor(answer: { code: string; exitCode: number; message: string; data?: object }) {
    super(answer.message, answer.data ?? {})
    this.#code = answer.code
    this.exitCode = (Object.values(ExitCode) as number[]).includes(answer.exitCode) ? (answer.exitCode as ExitCode) : ExitCode.internal
  }

  override get code(): string {
    return this.#code
  }
}
