import { ExitCode, ForkpointError } from './ForkpointError.js'

/** The base of every error a Workspace, Branch or sandbox throws on purpose. */
export abstract class BranchError extends ForkpointError {}

/** A commit whose paths were also changed in the parent since the branch was made. `data.paths` lists them. */
export class ConflictError extends BranchError {
  readonly exitCode = ExitCode.conflict
}

/** `onConflict: "fail"`: a sibling committed into the parent first. */
export class BranchStaleError extends BranchError {
  readonly exitCode = ExitCode.conflict
}

/** No live branch of that name. */
export class BranchNotFoundError extends BranchError {
  readonly exitCode = ExitCode.usage
}

/** A live branch of that name already exists. */
export class BranchExistsError extends BranchError {
  readonly exitCode = ExitCode.usage
}

/** A branch that cannot be committed or aborted now: it has live children, or is already finished. */
export class BranchBusyError extends BranchError {
  readonly exitCode = ExitCode.conflict
}

/** The requested backend cannot work here (no overlayfs, no reflink file system, no namespaces). */
export class BackendUnavailableError extends BranchError {
  readonly exitCode = ExitCode.usage
}

/** The sandbox could not be set up (namespaces, mounts, limits) or got bad options. */
export class SandboxError extends BranchError {
  readonly exitCode = ExitCode.usage
}
