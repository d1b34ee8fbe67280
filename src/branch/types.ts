import type { Digest } from '../objects/digest.js'
import type { ProcessId } from '../sandbox/processId.js'

export type BackendName = 'overlay' | 'reflink' | 'copy'

export type { ProcessId }

/**
 * What the store remembers of a live branch (`branches/live/<id>/state.json`), so that
 * another process can commit or abort it and a later open can clean it up.
 */
export interface BranchState {
  kind: 'branch-state'
  schemaVersion: 1
  id: string
  /** Full name: `attempt`, or `attempt/variant` for a branch of a branch. */
  name: string
  /** The parent branch's id, or null for the workspace. */
  parent: string | null
  backend: BackendName
  /** The workspace tree the branch (or its top ancestor) started from. */
  baseTree: Digest
  /** Read-only directories making up the branch's base, topmost first (overlay lower layers). */
  layers: string[]
  /** The parent's commit count when this branch was made: a different count now means a sibling committed. */
  parentGeneration: number
  /** The process whose exit ends the branch; null for a persistent branch (CLI), which lives until commit or abort. */
  owner: ProcessId | null
  /** The helper process holding the user + mount namespace of an unprivileged overlay, or null. */
  holder: ProcessId | null
  /** Set when the branch is mounted in the host's own mount namespace, where every tool sees it (persistent overlay branches). */
  hostView?: HostView
  /** The cap on what the branch writes, in bytes (its upper layer's own file system); absent: none. */
  disk?: number
  createdAt: string
}

/** A branch mounted in the host's mount namespace: how, and where. */
export interface HostView {
  via: 'kernel' | 'fuse'
  /** The directory asked for (`--path`), or null: the store's `branches/live/<id>/mnt`. */
  path: string | null
}

/** One path the branch changed, relative to the workspace root. */
export type BranchChange = { path: string; type: 'put' } | { path: string; type: 'delete' }

export interface BranchInfo {
  name: string
  path: string
  parent: string | null
  backend: BackendName
  persistent: boolean
  /**
   * "host": `path` is a directory of the host's file system (a clone, or an overlay mounted
   * in the host's mount namespace) that git, node, npm and editors can use. "namespace": it
   * is reachable only as `/proc/<pid>/root/...` of a namespace holder, where tools that
   * resolve real paths fail; use `forkpoint shell NAME` (or `Branch.run`) instead.
   */
  view: 'host' | 'namespace'
  createdAt: string
}

/** How a commit into the workspace meets conflicts it cannot merge (the CLI's and the service's commit). */
export interface InProgressOptions {
  /** Leave the conflicts in the workspace (markers, `NAME~LABEL`) with the commit in progress, instead of applying nothing. */
  stopOnConflict?: boolean
  /** Finish the commit in progress: the conflicts are fixed in the workspace and stay as they are there. */
  resume?: boolean
  /** With `resume`: keep the versions kept beside conflicts (`NAME~LABEL`) that are still there, instead of refusing. */
  keepLeftovers?: boolean
}

/** What a commit may hold back for the layers above the branch (the effects outbox). */
export interface CommitHooks {
  /**
   * Runs once the commit is sure to go in (no conflict, every file staged beside its
   * target), before the first file is put in place. A throw undoes the staging: nothing is applied.
   */
  beforeApply?: () => Promise<void>
}

export interface CommitResult {
  name: string
  /** Paths written into the parent (created, modified or replaced). */
  written: string[]
  /** Paths removed from the parent. */
  deleted: string[]
  /** Changed paths the parent already had in the same state (nothing to do). */
  alreadyThere: string[]
  /** Of `written`: files the parent had changed too, merged line by line. */
  merged: string[]
  /** What the branch wrote that git would run (`.git/config`, hooks, `.git` files), not applied unless `trustGit`. */
  heldBack: string[]
  durationMs: number
}

/** How a commit treats what the branch changed. */
export interface CommitPolicy {
  /** "merge" (default): fine unless a changed path also changed in the parent; "fail": any commit into the parent since the branch was made makes it stale. */
  onConflict?: ConflictPolicy
  /** Let symlinks that lead out of the workspace in (refused otherwise). */
  allowExternalSymlinks?: boolean
  /** Apply the `.git/config`, hooks and `.git` files the branch wrote (held back otherwise). */
  trustGit?: boolean
}

export type ConflictPolicy = 'merge' | 'fail'
