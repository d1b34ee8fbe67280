import { promises as fs } from 'node:fs'
import { z } from 'zod'
import type { Store } from '../../store/Store.js'
import { readProgressFile, writeProgressFile } from './progressFile.js'
import { PathConflictSchema, WorkspacePathSchema } from './progressSchemas.js'

/** Where a branch commit that stopped on conflicts in the workspace is recorded, in the store. */
export const COMMIT_STATE = 'COMMIT_STATE.json'

/** The workspace's own versions of the files the stopped commit wrote over, kept for `--abort`. */
export const COMMIT_SAVED = 'COMMIT_SAVED'

/** A file the stopped commit wrote in the workspace: what was there before (a copy under COMMIT_SAVED, or nothing). */
const SavedFileSchema = z.object({
  path: WorkspacePathSchema,
  /** The copy's name under COMMIT_SAVED (its place in `saved`), or null when the path did not exist. */
  copy: z
    .string()
    .regex(/^[0-9]{1,9}$/)
    .nullable(),
  /** Permission bits only: `--abort` gives them back to the file. */
  mode: z.int().min(0).max(0o777),
})
export type SavedFile = z.infer<typeof SavedFileSchema>

/** A branch commit in progress: the workspace holds its conflicts until `commit NAME --continue` or `--abort`. */
const CommitStateSchema = z.object({
  kind: z.literal('commit-state'),
  schemaVersion: z.literal(1),
  /** The branch being committed. */
  branch: z.string(),
  /** Paths relative to the workspace; `kept` as a merge keeps them (markers at the path, `NAME~LABEL` beside it). */
  conflicts: z.array(PathConflictSchema),
  saved: z.array(SavedFileSchema),
})
export type CommitState = z.infer<typeof CommitStateSchema>

export async function writeCommitState(store: Store, state: CommitState): Promise<void> {
  await writeProgressFile(store, COMMIT_STATE, state)
}

/**
 * The branch commit in progress in the workspace, or null when there is none.
 * @throws {CorruptDataError} when the state file does not parse
 */
export function readCommitState(store: Store): Promise<CommitState | null> {
  return readProgressFile<CommitState>(store, COMMIT_STATE, CommitStateSchema, `the commit state (${COMMIT_STATE} in the store) is damaged`)
}

/** End the commit in progress: the state first, then the saved copies it named. */
export async function clearCommitState(store: Store): Promise<void> {
  await fs.rm(store.path(COMMIT_STATE), { force: true })
  await fs.rm(store.path(COMMIT_SAVED), { recursive: true, force: true })
}
