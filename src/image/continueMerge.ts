import { openStore, type StoreLocator } from '../store/findStore.js'
import { MergeConflictError, UsageError } from '../errors/index.js'
import type { Digest } from '../objects/digest.js'
import { recoverCheckout } from '../world/checkout/checkoutJournal.js'
import { clearMergeState, readMergeState } from '../world/merge/mergeState.js'
import { quotePath } from '../world/diff/quotePath.js'
import { readSnapshot } from '../world/tree/readObjects.js'
import { snapshotWorkspace } from '../world/scan/snapshotWorkspace.js'
import { entryAt } from '../world/tree/entryAt.js'
import type { PathConflict } from '../world/merge/mergeWorld.js'
import { sameEntry, treeSource } from '../world/tree/treeSource.js'
import type { Store } from '../store/Store.js'
import { filesWithMarkers, leftoverFiles } from '../world/merge/unresolvedConflicts.js'
import type { LayerReport } from './mergeImages.js'
import { counted } from '../util/plural.js'

export interface ContinueMergeResult {
  outcome: 'merged'
  id: Digest
  bases: Digest[]
  layers: LayerReport[]
}

/** Fields of a snapshot that are not layers of the image. */
const NOT_LAYERS = new Set(['kind', 'schemaVersion', 'parents', 'world', 'meta'])

export interface ContinueMergeArgs extends StoreLocator {
  allowExternalSymlinks?: boolean
  /** Snapshot the versions the merge kept beside conflicts (`NAME~LABEL`) that are still there, instead of refusing. */
  keepLeftovers?: boolean
}

/**
 * Finish a merge that stopped on conflicts, once the user has fixed the files: snapshot the
 * workspace as the merge (parents [ours, theirs], every other layer as the merge decided it)
 * and end the merge.
 * @throws {UsageError} when no merge is in progress
 * @throws {MergeConflictError} while a conflicted text file still holds conflict markers, or a version kept beside a conflict (`NAME~LABEL`) is still there without `keepLeftovers` (nothing written)
 * @throws {RefConflictError} when HEAD moved since the merge began
 */
export async function continueMerge(args: ContinueMergeArgs = {}): Promise<ContinueMergeResult> {
  const { store, workspace } = await openStore(args)
  await recoverCheckout(store, workspace)
  const state = await readMergeState(store)
  if (!state) throw new UsageError('merge --continue: no merge is in progress')
  await assertResolved(workspace, state.conflicts, args.keepLeftovers ?? false)
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
  const fixed = await changedConflicts(store, draft.world.tree, result.tree, state.conflicts)
  const untouched = state.conflicts.length - fixed
  const summary = `world: resolved (${counted(fixed, 'path')} fixed by hand${untouched > 0 ? `, ${untouched} left as the merge wrote ${untouched === 1 ? 'it' : 'them'}` : ''})`
  const world: LayerReport = { layer: 'world', outcome: 'merged', summary }
  return { outcome: 'merged', id: result.id, bases: state.bases, layers: [world, ...(state.layers.filter((l) => l.layer !== 'world') as LayerReport[])] }
}

/** Refuse while markers or (unless kept on purpose) versions beside a conflict remain. */
async function assertResolved(workspace: string, conflicts: PathConflict[], keepLeftovers: boolean): Promise<void> {
  const marked = await filesWithMarkers(workspace, conflicts)
  if (marked.length > 0) {
    throw new MergeConflictError(`merge --continue: conflict markers remain in ${marked.map(quotePath).join(', ')}: fix them first (or 'forkpoint merge --abort')`, {
      paths: marked,
    })
  }
  const left = keepLeftovers ? [] : await leftoverFiles(workspace, conflicts)
  if (left.length > 0) {
    throw new MergeConflictError(
      `merge --continue: the versions kept beside conflicts are still there: ${left.map(quotePath).join(', ')}: keep the one you want at the conflict's path and remove the others, or 'forkpoint merge --continue --keep-leftovers' to snapshot them too`,
      { paths: left },
    )
  }
}

/** How many conflicts the user changed: any of its paths (the path, the versions beside it) differs between the conflict tree and the result. */
async function changedConflicts(store: Store, conflictTree: Digest, resultTree: Digest, conflicts: PathConflict[]): Promise<number> {
  const source = treeSource(store)
  const at = (tree: Digest, path: string) => entryAt(source, tree, path.split('/')).then((e) => e ?? undefined)
  let changed = 0
  for (const c of conflicts) {
    const paths = new Set([c.path, c.kept.ours, c.kept.theirs].filter((p): p is string => p !== null))
    for (const path of paths) {
      if (sameEntry(await at(conflictTree, path), await at(resultTree, path))) continue
      changed++
      break
    }
  }
  return changed
}
