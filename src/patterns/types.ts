import type { Branch } from '../branch/Branch.js'
import type { RunOptions } from '../branch/run/runInBranch.js'
import type { ConflictPolicy } from '../branch/types.js'
import type { Workspace } from '../branch/Workspace.js'
import type { CommitWithEffectsResult } from '../effects/branchEffects.js'
import type { Effects } from '../effects/Effects.js'

/** Where a pattern's branches are made and its winner is committed: the workspace, or a branch of it. */
export type Target = Workspace | Branch

/** What an in-process candidate reports: `true`/`false`, or a verdict with a score (higher is better; default 1 on success, 0 otherwise). */
export type TaskResult<V = unknown> = boolean | { success: boolean; score?: number; value?: V }

/** What a candidate knows besides its path, attempt number and signal. */
export interface TaskContext {
  branch: Branch
  /** 1 for the first level of a tree search, 2 for its children, ...; 1 elsewhere. */
  depth: number
  /** Reflexion: the critique of the previous failed attempt. Tree searches: the node this one extends. */
  feedback?: string
  parent?: CandidateResult
  /** With the pattern's `effects` option: this candidate's own handle (speculative). Only the winner's deferred effects run, once; the others' are dropped. */
  effects?: Effects
}

/**
 * An in-process candidate: works in `path` (its own branch) and reports. `signal` fires on
 * timeout or cancellation; a candidate that ignores it is abandoned, never committed.
 */
export type Task<V = unknown> = (path: string, attempt: number, signal: AbortSignal, context: TaskContext) => TaskResult<V> | Promise<TaskResult<V>>

/**
 * A command candidate: run (sandboxed unless `isolate: false`) in its branch, which is
 * mounted at the workspace's own path. Success is exit 0. `FORKPOINT_ATTEMPT` holds its
 * index (and `FORKPOINT_FEEDBACK` a reflexion critique).
 */
export interface CommandTask extends Omit<RunOptions, 'signal' | 'timeout' | 'input' | 'cwd'> {
  cmd: string | string[]
  /** Run in the branch after `cmd` finishes; prints a number (higher is better). Default: exit 0 = 1, else 0. */
  score?: string | string[]
}

/** A function, a command spec, or a shell command line. */
export type Candidate<V = unknown> = Task<V> | CommandTask | string

/** What became of one candidate. */
export type CandidateStatus = 'succeeded' | 'failed' | 'error' | 'timeout' | 'cancelled'

export interface CandidateResult<V = unknown> {
  /** Position in `Outcome.results` (tree searches number level after level). */
  index: number
  status: CandidateStatus
  /** status === 'succeeded': only these can win. */
  success: boolean
  /** The candidate's (or `evaluate`'s) score; null when it never reported (error, timeout, cancelled). */
  score: number | null
  /** What the candidate returned (command candidates: exit code, stdout, stderr, changed paths). */
  value?: V
  /** Why it failed: the exception's message, the timeout, the cancellation. */
  error?: string
  /** The branch it ran in (gone once the pattern returns), or null when it never started. */
  branch: string | null
  branchPath: string | null
  durationMs: number
  /** Tree searches: 1 for a strategy, 2 for its sub-strategies, ... */
  depth?: number
  /** Tree searches: the index of the node this one extends. */
  parent?: number
  /** Reflexion: the critique this attempt was given. */
  feedback?: string
  /** Fan-out (`queueRunner`): the worker that ran it, and the image it pushed (its world: the candidate's files). */
  worker?: string
  image?: string
}

/** One match of a tournament: the indexes that met and the one the judge kept. */
export interface Match {
  round: number
  a: number
  b: number
  winner: number
}

export type PatternName = 'speculate' | 'bestOfN' | 'reflexion' | 'treeOfThoughts' | 'beamSearch' | 'tournament'

export interface Outcome<V = unknown> {
  pattern: PatternName
  /** True when the winner's changes were applied to the target. */
  committed: boolean
  /** The index of the committed result. */
  winner?: number
  /** What the commit wrote into the target, and the deferred effects it sent or handed up. */
  commit?: CommitWithEffectsResult
  /** Every candidate, by index, whatever finished first. */
  results: CandidateResult<V>[]
  /** Tournaments: every match, round by round. */
  matches?: Match[]
  /** What the caller must hear about how the candidates ran (unsandboxed under an effects policy); absent when nothing. */
  warnings?: string[]
}

/** Options every pattern takes. */
export interface PatternOptions {
  /** Wall-clock limit per candidate: milliseconds or "30s", "2m". Off when not given. */
  timeout?: number | string
  /** Candidates running at once (default: the number of cores). */
  maxParallel?: number
  /**
   * Command candidates run sandboxed (default true); false runs them as plain processes in
   * their branch directories, every branch of the pattern then a directory of the host's
   * file system (`BranchOptions.onHost`), so that tools which resolve real paths (node,
   * git, `getcwd()`) work there.
   */
  isolate?: boolean
  /**
   * With `isolate: false` and an HTTP effects policy in force: run the command candidates
   * anyway, through the effects proxy as far as they honour it (effects may escape; the
   * outcome's `warnings` says so). Without it, that combination throws a UsageError.
   */
  allowUnsandboxedEffects?: boolean
  /** How the winner's commit treats a target that changed meanwhile (default "merge"). */
  onConflict?: ConflictPolicy
  /**
   * An effects handle (`openEffects`): each function candidate gets a fork of it as
   * `context.effects`; the winner's is committed with its branch (its deferred effects run,
   * once), the others are dropped. Command candidates' HTTP follows the store's policy file.
   */
  effects?: Effects
  /**
   * The environment command candidates start with (their attempt and feedback added), and
   * where FORKPOINT_KEY is read from for the ledgers of the branches' outboxes.
   * @default process.env
   */
  env?: NodeJS.ProcessEnv
}

/** A configured pattern, applied to a workspace or branch. */
export interface Pattern<V = unknown> {
  readonly name: PatternName
  /**
   * Run the candidates in branches of `target`, commit the winner into it, abort the rest.
   * @throws {PatternCancelledError} `signal` fired
   * @throws {ConflictError} the winner's commit met a change made to the target meanwhile
   */
  apply(target: Target, options?: { signal?: AbortSignal }): Promise<Outcome<V>>
}
