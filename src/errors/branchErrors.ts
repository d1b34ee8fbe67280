import { CorruptDataError, ExitCode, ForkpointError, type NoData } from './ForkpointError.js'

/** The base of every error a Workspace, Branch or sandbox throws on purpose. */
export abstract class BranchError<Data extends object = NoData> extends ForkpointError<Data> {}

/** A commit whose paths were also changed in the parent since the branch was made. `data.paths` lists them. */
export class ConflictError extends BranchError<{ name: string; paths: string[]; inProgress?: boolean }> {
  readonly exitCode = ExitCode.conflict
}

/** `onConflict: "fail"`: a sibling committed into the parent first. */
export class BranchStaleError extends BranchError<{ name: string }> {
  readonly exitCode = ExitCode.conflict
}

/** No live branch of that name (or id). */
export class BranchNotFoundError extends BranchError<{ name?: string; id?: string }> {
  readonly exitCode = ExitCode.usage
}

/** A live branch of that name already exists. */
export class BranchExistsError extends BranchError<{ name: string }> {
  readonly exitCode = ExitCode.usage
}

/**
 * A branch that cannot be committed, aborted or run in now: it has live children (`data.children`), commands
 * running in it (`data.runs`), it is being committed or aborted, or it is already finished.
 */
export class BranchBusyError extends BranchError<{ name: string; children: string[]; runs: number }> {
  readonly exitCode = ExitCode.conflict
}

/** The requested backend cannot work here (no overlayfs, no reflink file system, no namespaces). */
export class BackendUnavailableError extends BranchError<{ backend?: string; from?: string; to?: string; path?: string; via?: string; cause?: string }> {
  readonly exitCode = ExitCode.usage
}

/** The sandbox could not be set up (namespaces, mounts, limits) or got bad options. */
export class SandboxError extends BranchError<{ value?: string | number; net?: string; path?: string; file?: string; args?: string[]; exitCode?: number; stderr?: string }> {
  readonly exitCode = ExitCode.usage
}

/** A branch's state file that forkpoint did not write as it is: it names a path, is malformed, or its parents do not fit. Nothing of it is used. */
export class BranchStateError extends CorruptDataError<{ id: string; file: string }> {}
