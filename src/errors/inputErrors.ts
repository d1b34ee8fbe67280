import { UsageError } from './ForkpointError.js'

/** A file or directory the user named (a pack file, `-C DIR`) is not there (`data.path`). */
export class InputNotFoundError extends UsageError<{ path: string }> {}

/**
 * A feature needs an optional package the project has not installed (`data.feature`;
 * `data.packages`, each with the version range forkpoint works with; `data.install`, the
 * command that adds them).
 */
export class MissingPackageError extends UsageError<{ feature: string; packages: string[]; install: string }> {}
