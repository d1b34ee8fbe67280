import { CorruptDataError, ExitCode, ForkpointError, UsageError } from './ForkpointError.js'

/** A remote spec that does not parse, or names an unknown transport. */
export class RemoteSpecError extends UsageError<{ spec?: string; tag?: string }> {}

/** The remote could not be reached or answered with an error (`data.status`, `data.codes`). */
export class RegistryRequestError extends ForkpointError<{ status?: number; codes?: string[]; url?: string; bucket?: string }> {
  readonly exitCode = ExitCode.usage
}

/** The registry wants credentials we do not have, or refused the ones we sent. */
export class RegistryAuthError extends ForkpointError<{ host?: string; user?: string | null; program?: string; bucket?: string; status?: number }> {
  readonly exitCode = ExitCode.usage
}

/** No image under that tag or digest on the remote. */
export class RemoteImageNotFoundError extends ForkpointError<{ remote: string; reference: string }> {
  readonly exitCode = ExitCode.usage
}

/**
 * A manifest that is not a forkpoint image, is malformed, names objects the remote lacks,
 * or would cost more than the budget allows (docs/untrusted-input.md: `data.limit` names the
 * cap, `data.max` its value, `data.value` what the image asks for).
 */
export class InvalidImageError extends CorruptDataError<{
  limit?: string
  value?: number
  digest?: string
  from?: string
  descriptor?: object
  size?: number
  total?: number
  max?: number
  path?: string
  index?: string
  pack?: string
}> {}

/** A pack file that is not one, or holds a hostile entry (link, bad name, oversized). */
export class InvalidPackError extends CorruptDataError<{ file?: string; path?: string; digest?: string; limit?: number; size?: number; offset?: number }> {}

/** `--verify-key` given, and the image is unsigned or its signature does not verify (`data.manifest`). */
export class SignatureError extends CorruptDataError<{ manifest?: string }> {}
