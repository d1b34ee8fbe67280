import type { StoreLocator } from '../store/findStore.js'
import type { NetMode } from '../sandbox/runSandboxed.js'
import type { CandidateRunner } from './runCandidates.js'
import type { PatternOptions } from './types.js'

/** What `explore` and `speculate` over commands (the CLI's) share. */
export interface CommandPatternArgs extends StoreLocator {
  maxParallel?: number
  timeout?: number | string
  net?: NetMode
  /** false: plain processes in the branch directories instead of sandboxes. */
  isolate?: boolean
  /** With `isolate: false` under an effects policy: run anyway (effects may escape). */
  allowUnsandboxedEffects?: boolean
  signal?: AbortSignal
  /** Run the attempts elsewhere: `queueRunner(...)` (fan-out across machines). */
  runner?: CandidateRunner
  /** What the commands start with, and where FORKPOINT_KEY is read from: the caller's environment (a pattern's `env`). */
  env: NodeJS.ProcessEnv
}

/** The pattern options those arguments give, leaving out what was not asked. */
export function commandPatternOptions({
  isolate = true,
  allowUnsandboxedEffects,
  runner,
  maxParallel,
  timeout,
  env,
}: CommandPatternArgs): PatternOptions & { runner?: CandidateRunner } {
  return {
    isolate,
    env,
    ...(allowUnsandboxedEffects ? { allowUnsandboxedEffects } : {}),
    ...(runner ? { runner } : {}),
    ...(maxParallel === undefined ? {} : { maxParallel }),
    ...(timeout === undefined ? {} : { timeout }),
  }
}
