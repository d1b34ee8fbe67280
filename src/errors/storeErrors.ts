import { CorruptDataError, ExitCode, ForkpointError, UsageError } from './ForkpointError.js'

/** No store at the given or discovered location: `data.root` (a path that is not a store) or `data.dir` (where the search began). */
export class StoreNotFoundError extends UsageError<{ root?: string; dir?: string }> {}

/** An id or prefix that names no object or ref: `data.spec`, a tag `data.name` or an object `data.digest`. */
export class ObjectNotFoundError extends ForkpointError<{ spec?: string; name?: string; digest?: string }> {
  readonly exitCode = ExitCode.usage
}

/** A short id that matches more than one object (`data.matches`, at most 10). */
export class AmbiguousIdError extends UsageError<{ spec: string; matches: string[] }> {}

/** Bytes whose sha256 is not the digest they are stored or named under. */
export class DigestMismatchError extends CorruptDataError<{ digest?: string; actual?: string | null; size?: number; path?: string; reference?: string; expected?: string }> {}

/** A structured object that does not parse or lacks required fields; `data.expected` / `data.actual`: kinds. */
export class MalformedObjectError extends CorruptDataError<{ digest?: string; layer?: string; expected?: string; actual?: string | null; entry?: unknown }> {}

/** A path from data that would escape its root: `..`, absolute, through a symlink. */
export class UnsafePathError extends CorruptDataError<{ path?: string; target?: string; name?: string; where?: string; layer?: string }> {}

/** A lock that could not be taken in time because another live process holds it. */
export class LockTimeoutError extends ForkpointError<{ path?: string; holder?: { pid: number; host?: string; at?: string } | null }> {
  readonly exitCode = ExitCode.conflict
}

/** A ref changed under us between read and compare-and-swap: it holds `data.actual`, not `data.expected`. */
export class RefConflictError extends ForkpointError<{ ref?: string; actual?: string | null; expected?: string | null }> {
  readonly exitCode = ExitCode.conflict
}

/** `verify` (or a read) found bad or missing objects. */
export class StoreCorruptError extends CorruptDataError<{
  digest?: string
  path?: string
  root?: string
  problems?: number
  ledgers?: number
  corrupt?: string[]
  missing?: string[]
}> {}

/** As root, a store another user owns, not listed in `FORKPOINT_SAFE_DIRECTORY`: its contents are that user's to choose. */
export class UnsafeStoreOwnerError extends UsageError<{ root: string; owner: number }> {}
