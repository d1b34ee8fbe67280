import { openStore, type StoreLocator } from '../store/findStore.js'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { MergeConflictError, UsageError } from '../errors/index.js'
import type { Digest } from '../store/digest.js'
import { recoverCheckout } from '../world/checkoutJournal.js'
import { fsPath } from '../world/fsName.js'
import { type MergeState, clearMergeState, readMergeState } from '../world/mergeState.js'
import { quotePath } from '../world/quotePath.js'
import { readSnapshot } from '../world/readObjects.js'
import { snapshotWorkspace } from '../world/snapshotWorkspace.js'
import type { LayerReport } from './mergeImages.js'

export interface ContinueMergeResult {
  outcome: 'merged'
  id: Digest
  bases: Digest[]
  layers: LayerReport[]
}

/** Fields of a snapshot that are not layers of the image. */
const NOT_LAYERS = new Set(['kind', 'schemaVersion', 'parents', 'world', 'meta'])

/**
 * Finish a merge that stopped on conflicts, once the user has fixed the files: snapshot the
 * workspace as the merge (parents [ours, theirs], every other layer as the merge decided it)
 * and end the merge.
 * @throws {UsageError} when no merge is in progress
 * @throws {MergeConflictError} while a conflicted text file still holds conflict markers (nothing written)
 * @throws {RefConflictError} when HEAD moved since the merge began
 */
export async function continueMerge(args: StoreLocator & { allowExternalSymlinks?: boolean } = {}): Promise<ContinueMergeResult> {
  const { store, workspace } = await openStore(args)
  await recoverCheckout(store, workspace)
  const state = await readMergeState(store)
  if (!state) throw new UsageError('merge --continue: no merge is in progress')
  const marked = await filesWithMarkers(workspace, state)
  if (marked.length > 0) {
    throw new MergeConflictError(`merge --continue: conflict markers remain in ${marked.map(quotePath).join(', ')}: fix them first (or 'forkpoint merge --abort')`, {
      paths: marked,
    })
  }
  const draft = await readSnapshot(store, state.draft)
  const layers = Object.fromEntries(Object.entries(draft).filter(([key]) => !NOT_LAYERS.has(key)))
  const result = await snapshotWorkspace({
    store,
    dir: workspace,
    message: state.message,
    allowExternalSymlinks: args.allowExternalSymlinks,
    merging: { parents: [state.ours, state.theirs], env: draft.world.env, layers },
  })
  await clearMergeState(store)
  const world: LayerReport = {
    layer: 'world',
    outcome: 'merged',
    summary: `world: resolved (${state.conflicts.length} path${state.conflicts.length === 1 ? '' : 's'} fixed by hand)`,
  }
  return { outcome: 'merged', id: result.id, bases: state.bases, layers: [world, ...(state.layers.filter((l) => l.layer !== 'world') as LayerReport[])] }
}

/** The text conflicts (one file with markers at the path) whose file still has a marker line. */
async function filesWithMarkers(workspace: string, state: MergeState): Promise<string[]> {
  const texts = state.conflicts.filter((c) => c.kept.ours === c.path && c.kept.theirs === c.path).map((c) => c.path)
  const marked: string[] = []
  for (const path of texts) {
    const bytes = await fs.readFile(fsPath(join(workspace, path))).catch(() => null) // removed by the user: resolved
    if (bytes && hasMarkers(bytes)) marked.push(path)
  }
  return marked
}

/** A line that opens or closes a conflict as the merge writes them (`<<<<<<< LABEL`, `>>>>>>> LABEL`) or divides one (`=======`). */
function hasMarkers(bytes: Buffer): boolean {
  return /^(<{7} |>{7} |={7}\r?$)/m.test(bytes.toString('latin1'))
}
