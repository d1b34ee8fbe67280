import { promises as fs } from 'node:fs'
import type { Store } from '../../store/Store.js'
import type { PathConflict } from './mergeWorld.js'
import { readProgressFile, writeProgressFile } from './progressFile.js'

/** Where a branch commit that stopped on conflicts in the workspace is recorded, in the store. */
export const COMMIT_STATE = 'COMMIT_STATE.json'

/** The workspace's own versions of the files the stopped commit wrote over, kept for `--abort`. */
export const COMMIT_SAVED = 'COMMIT_SAVED'

/** A file the stopped commit wrote in the workspace: what was there before (a copy under COMMIT_SAVED, or nothing). */
export interface SavedFile {
  path: string
  /** The copy's name under COMMIT_SAVED, or null when the path did not exist. */
  copy: string | null
  mode: number
}

/** A branch commit in progress: the workspace holds its conflicts until `commit NAME --continue` or `--abort`. */
export interface CommitState {
  kind: 'commit-state'
  schemaVersion: 1
  /** The branch being committed. */
  branch: string
  /** Paths relative to the workspace; `kept` as a merge keeps them (markers at the path, `NAME~LABEL` beside it). */
  conflicts: PathConflict[]
  saved: SavedFile[]
}

export async function writeCommitState(store: Store, state: CommitState): Promise<void> {
  await writeProgressFile(store, COMMIT_STATE, state)
}

/**
 * The branch commit in progress in the workspace, or null when there is none.
 * @throws {CorruptDataError} when the state file does not parse
 */
export function readCommitState(store: Store): Promise<CommitState | null> {
  return readProgressFile<CommitState>(
    store,
    COMMIT_STATE,
    (s) => s.kind === 'commit-state' && typeof s.branch === 'string' && Array.isArray(s.conflicts) && Array.isArray(s.saved),
    `the commit state (${COMMIT_STATE} in the store) is damaged`,
  )
}

/** End the commit in progress: the state first, then the saved copies it named. */
export async function clearCommitState(store: Store): Promise<void> {
  await fs.rm(store.path(COMMIT_STATE), { force: true })
  await fs.rm(store.path(COMMIT_SAVED), { recursive: true, force: true })
}
