import { ExitCode, ForkpointError, UsageError } from './ForkpointError.js'

/** The checkout target has changes that would be lost; pass `force`. */
export class DirtyWorkspaceError extends ForkpointError {
  readonly exitCode = ExitCode.conflict
}

/** A checkout target that exists and is not empty, when a fresh directory is required. */
export class TargetNotEmptyError extends UsageError {}

/** A three-way merge that cannot be done without a human. `data.paths` lists the paths. */
export class MergeConflictError extends ForkpointError {
  readonly exitCode = ExitCode.conflict
}
