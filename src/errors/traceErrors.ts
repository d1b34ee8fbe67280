import { CorruptDataError, ExitCode, ForkpointError, UsageError } from './ForkpointError.js'

/** A run artifact (`*.run.json`, a stored run, a journal) that does not parse or validate. */
export class RunArtifactError extends CorruptDataError {}

/** A run id or artifact path that names no run. */
export class RunNotFoundError extends UsageError {}

/**
 * During replay the agent made a call the recording does not hold (or skipped or
 * changed one). `data.step` names it.
 */
export class ReplayDivergenceError extends ForkpointError {
  readonly exitCode = ExitCode.conflict
}

/** A run that cannot be replayed as asked: content-redacted, or recorded without the needed payloads. */
export class ReplayNotPossibleError extends ForkpointError {
  readonly exitCode = ExitCode.conflict
}

/** A network access attempted while offline (replay, `ci check`). */
export class OfflineViolationError extends ForkpointError {
  readonly exitCode = ExitCode.offline
}

/** `FORKPOINT_KEY` is needed (encrypted payloads) but not set, or not usable. */
export class EncryptionKeyError extends UsageError {}

/** Encrypted payloads that do not decrypt: the wrong key, or tampered bytes. */
export class DecryptionError extends CorruptDataError {}

/** Replay would run a command taken from a run this store did not record: it needs `-- CMD` or `--trust-command`. */
export class UntrustedCommandError extends UsageError {}

/** The agent failed while `ci record` recorded it: no golden run is written from a failed run. */
export class AgentFailedError extends ForkpointError {
  readonly exitCode = ExitCode.conflict
}
