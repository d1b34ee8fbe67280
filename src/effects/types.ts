import type { EffectClass } from '../objects/Ledger.js'

export interface ToolOptions<A> {
  /** What calling the tool does to the world outside the workspace. */
  class: EffectClass
  /**
   * The idempotency key of a call: calls with one key are one effect. Default: the tool's
   * name and the digest of its canonical arguments, so equal calls are one effect.
   */
  key?: (args: A) => string
}

/**
 * What an irreversible call returns while it waits in a speculative context's outbox: the
 * tool has not run. It runs when the context commits; a later call with the same key then
 * returns the real result.
 */
export interface DeferredEffect {
  deferred: true
  tool: string
  idempotencyKey: string
  /** The seq of the ledger entry that deferred it. */
  seq: number
}

/** `direct`: everything runs at once. `speculative` (a branch, a pattern candidate): irreversible calls wait for commit. */
export type EffectsMode = 'direct' | 'speculative'

export function isDeferredEffect(value: unknown): value is DeferredEffect {
  return typeof value === 'object' && value !== null && (value as DeferredEffect).deferred === true && typeof (value as DeferredEffect).idempotencyKey === 'string'
}
