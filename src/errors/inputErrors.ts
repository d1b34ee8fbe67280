import { CorruptDataError, UsageError } from './ForkpointError.js'

/** A file or directory the user named (a pack file, `-C DIR`) is not there (`data.path`). */
export class InputNotFoundError extends UsageError<{ path: string }> {}

/** Untrusted data that would cost more than the budget allows (docs/untrusted-input.md): `data.limit` names the cap, `data.max` its value, `data.value` what the input asks for. */
export class InputBudgetError extends CorruptDataError<{ limit: string; max: number; value: number }> {}
