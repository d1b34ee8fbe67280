import { CorruptDataError, ExitCode, ForkpointError, UsageError } from './ForkpointError.js'

/**
 * An effects ledger that fails verification: an edited, removed or reordered entry, a broken
 * chain or head, the wrong HMAC key, or an entry naming an object of the wrong kind.
 * `data.reason` says which, `data.seq` where.
 */
export class LedgerTamperedError extends CorruptDataError<{
  ledger: string
  reason: 'malformed' | 'chain' | 'head' | 'key' | 'unkeyed' | 'reference' | 'conflict' | 'seq' | 'prev'
  seq?: number
  digest?: string
  idempotencyKey?: string
  differs?: 'args' | 'result'
  hashes?: string[]
}> {}

/**
 * One idempotency key used for two different effects: called again with other arguments,
 * or (in a union of two ledgers) executed with two different results. `data.reason` is `args` or `result`.
 */
export class EffectKeyConflictError extends ForkpointError<{ idempotencyKey: string; reason: 'args' | 'result'; hashes: string[]; tool?: string }> {
  readonly exitCode = ExitCode.conflict
}

/** A deferred effect must run (commit) but its tool is not registered on the handle. `data.tool` names it. */
export class EffectToolMissingError extends UsageError<{ tool: string }> {}

/** `.forkpoint/effects.json` (the HTTP effects policy) cannot be used: not JSON, or a rule that is not valid. `data.file` names it. */
export class EffectsPolicyError extends UsageError<{ file: string }> {}
