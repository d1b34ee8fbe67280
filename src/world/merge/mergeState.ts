import { promises as fs } from 'node:fs'
import { z } from 'zod'
import { DigestSchema } from '../../objects/digestSchema.js'
import { deleteRef } from '../../store/refs.js'
import type { Store } from '../../store/Store.js'
import { readStateTextOrNull } from '../../store/readStateFile.js'
import { readProgressFile, writeProgressFile } from './progressFile.js'
import { PathConflictSchema } from './progressSchemas.js'

/** Where a merge that stopped on conflicts is recorded, in the store. */
export const MERGE_STATE = 'MERGE_STATE.json'

/**
 * Keeps the merge's draft snapshot (its parents and the layers already decided) from gc
 * while the merge is in progress. Made without a reflog, removed when the merge ends.
 */
export const MERGE_DRAFT_REF = 'refs/merge/draft'

/** A merge in progress: the workspace holds its conflict tree until `--continue` or `--abort`. */
const MergeStateSchema = z.object({
  kind: z.literal('merge-state'),
  schemaVersion: z.literal(1),
  ours: DigestSchema,
  theirs: DigestSchema,
  bases: z.array(DigestSchema),
  /** A snapshot with parents [ours, theirs], the conflict tree and every other layer as the merge decided it. */
  draft: DigestSchema,
  conflicts: z.array(PathConflictSchema),
  /** Layers other than the world that both sides changed: ours' version is in the draft. */
  layerConflicts: z.array(z.string()),
  layers: z.array(z.object({ layer: z.string(), outcome: z.string(), summary: z.string() })),
  message: z.string(),
})
export type MergeState = z.infer<typeof MergeStateSchema>

export async function writeMergeState(store: Store, state: MergeState): Promise<void> {
  await writeProgressFile(store, MERGE_STATE, state)
}

/**
 * The merge in progress, or null when there is none.
 * @throws {CorruptDataError} when the state file does not parse (`merge --abort` still ends it)
 */
export function readMergeState(store: Store): Promise<MergeState | null> {
  return readProgressFile<MergeState>(store, MERGE_STATE, MergeStateSchema, `the merge state (${MERGE_STATE} in the store) is damaged: 'forkpoint merge --abort' ends the merge`)
}

export async function mergeInProgress(store: Store): Promise<boolean> {
  return readStateTextOrNull(store.path(MERGE_STATE)) !== null
}

/** End the merge: the state first, then the draft's ref (a ref left alone is replaced by the next merge). */
export async function clearMergeState(store: Store): Promise<void> {
  await fs.rm(store.path(MERGE_STATE), { force: true })
  await deleteRef(store, MERGE_DRAFT_REF)
}
