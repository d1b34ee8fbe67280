import { CorruptDataError, ExitCode, ForkpointError, UsageError } from './ForkpointError.js'

/** The checkout target has changes that would be lost (`data.paths`); pass `force`. */
export class DirtyWorkspaceError extends ForkpointError<{ paths: string[] }> {
  readonly exitCode = ExitCode.conflict
}

/** A checkout target that exists and is not empty, when a fresh directory is required. */
export class TargetNotEmptyError extends UsageError<{ target: string }> {}

/** A three-way merge that cannot be done without a human. `data.paths` lists the paths. */
export class MergeConflictError extends ForkpointError<{ paths: string[] }> {
  readonly exitCode = ExitCode.conflict
}

/** A path a tree cannot hold: a FIFO, socket or device where a file, directory or symlink must be. `data.path` names it. */
export class UnsupportedFileError extends CorruptDataError<{ path: string }> {}

/** A tree the file system cannot hold: a name longer than NAME_MAX, a path longer than PATH_MAX, or deeper than the depth cap. `data.path` names it. */
export class PathLimitError extends CorruptDataError<{ path: string }> {}

/** A file a checkout could not write (`data.path`; `data.code`, the system's name for why: ENOSPC, EACCES…): the machine's fault, not the image's. */
export class FileWriteError extends UsageError<{ path: string; code: string | null }> {}
