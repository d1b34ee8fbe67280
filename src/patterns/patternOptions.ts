import { availableParallelism } from 'node:os'
import { UsageError } from '../errors/index.js'
import { parseDuration } from '../sandbox/limits.js'
import type { Effects } from '../effects/Effects.js'
import type { PatternOptions } from './types.js'

/** The common options, checked once, with their defaults. */
export interface ResolvedOptions {
  timeoutMs: number | null
  maxParallel: number
  isolate: boolean
  allowUnsandboxedEffects: boolean
  onConflict: 'merge' | 'fail'
  effects: Effects | undefined
  env: NodeJS.ProcessEnv
}

export function resolveOptions({
  timeout,
  maxParallel = availableParallelism(),
  isolate = true,
  allowUnsandboxedEffects = false,
  onConflict = 'merge',
  effects,
  env = process.env,
}: PatternOptions): ResolvedOptions {
  return {
    timeoutMs: timeout === undefined ? null : parseDuration(timeout),
    maxParallel: positiveCount(maxParallel, 'maxParallel'),
    isolate,
    allowUnsandboxedEffects,
    onConflict,
    effects,
    env,
  }
}

/** A whole number >= 1, or a UsageError naming the option. */
export function positiveCount(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new UsageError(`${what} must be a whole number of at least 1, not ${JSON.stringify(value)}`, { option: what, value })
  return value
}
