import { CorruptDataError, ExitCode, ForkpointError, type NoData, UsageError } from './ForkpointError.js'

/** A run artifact (`*.run.json`, a stored run, a journal) that does not parse or validate: `data.where`, `data.problem`. */
export class RunArtifactError extends CorruptDataError<{ where?: string; problem?: string; path?: string; runId?: string; limit?: number }> {}

/** A run id or artifact path that names no run. */
export class RunNotFoundError extends UsageError<{ spec?: string; path?: string; runId?: string }> {}

/**
 * During replay the agent made a call the recording does not hold (or skipped or
 * changed one). `data.step` names it; `data.diff` is the run diff (a `RunDiff`) when the whole run was compared.
 */
export class ReplayDivergenceError extends ForkpointError<{
  step?: string
  type?: string
  inputHash?: string
  expected?: { idx: number; name: string } | number | null
  diff?: object
}> {
  readonly exitCode = ExitCode.conflict
}

/** A run that cannot be replayed as asked: content-redacted, or recorded without the needed payloads. */
export class ReplayNotPossibleError extends ForkpointError<NoData> {
  readonly exitCode = ExitCode.conflict
}

/** A network access attempted while offline (replay, `ci check`): `data.target`, or the `data.step` that needed it. */
export class OfflineViolationError extends ForkpointError<{ target?: string; step?: string }> {
  readonly exitCode = ExitCode.offline
}

/** `FORKPOINT_KEY` is needed (encrypted payloads) but not set, or not usable. */
export class EncryptionKeyError extends UsageError<NoData> {}

/** Encrypted payloads that do not decrypt: the wrong key, or tampered bytes. */
export class DecryptionError extends CorruptDataError<NoData> {}

/** Replay would run a command taken from a run this store did not record: it needs `-- CMD` or `--trust-command`. */
export class UntrustedCommandError extends UsageError<{ runId: string; command: string[] }> {}

/** The agent failed while `ci record` recorded it: no golden run is written from a failed run. */
export class AgentFailedError extends ForkpointError<{ exitCode: number; runId: string }> {
  readonly exitCode = ExitCode.conflict
}
