import { UsageError } from './ForkpointError.js'

/** A file or directory the user named (a pack file, `-C DIR`) is not there (`data.path`). */
export class InputNotFoundError extends UsageError<{ path: string }> {}
