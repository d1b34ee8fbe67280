import { CorruptDataError, ExitCode, ForkpointError, UsageError } from './ForkpointError.js'

/** A remote spec that does not parse, or names an unknown transport. */
export class RemoteSpecError extends UsageError {}

/** The remote could not be reached or answered with an error (`data.status`, `data.codes`). */
export class RegistryRequestError extends ForkpointError {
  readonly exitCode = ExitCode.usage
}

/** The registry wants credentials we do not have, or refused the ones we sent. */
export class RegistryAuthError extends ForkpointError {
  readonly exitCode = ExitCode.usage
}

/** No image under that tag or digest on the remote. */
export class RemoteImageNotFoundError extends ForkpointError {
  readonly exitCode = ExitCode.usage
}

/** A manifest that is not a forkpoint image, is malformed, or names objects the remote lacks. */
export class InvalidImageError extends CorruptDataError {}

/** A pack file that is not one, or holds a hostile entry (link, bad name, oversized). */
export class InvalidPackError extends CorruptDataError {}

/** `--verify-key` given, and the image is unsigned or its signature does not verify. */
export class SignatureError extends CorruptDataError {}
