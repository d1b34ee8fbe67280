import { CorruptDataError, ExitCode, ForkpointError, UsageError } from './ForkpointError.js'

/** No store at the given or discovered location. */
export class StoreNotFoundError extends UsageError {}

/** An id or prefix that names no object or ref. */
export class ObjectNotFoundError extends ForkpointError {
  readonly exitCode = ExitCode.usage
}

/** A short id that matches more than one object. */
export class AmbiguousIdError extends UsageError {}

/** Bytes on disk whose sha256 is not the digest they are stored under. */
export class DigestMismatchError extends CorruptDataError {}

/** A structured object that does not parse or lacks required fields. */
export class MalformedObjectError extends CorruptDataError {}

/** A path from data that would escape its root: `..`, absolute, through a symlink. */
export class UnsafePathError extends CorruptDataError {}

/** A lock that could not be taken in time because another live process holds it. */
export class LockTimeoutError extends ForkpointError {
  readonly exitCode = ExitCode.conflict
}

/** A ref changed under us between read and compare-and-swap. */
export class RefConflictError extends ForkpointError {
  readonly exitCode = ExitCode.conflict
}

/** `verify` found bad or missing objects. */
export class StoreCorruptError extends CorruptDataError {}
