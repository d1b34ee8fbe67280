import { RefConflictError, UsageError } from '../errors/index.js'
import { createRefs } from '../store/createRefs.js'
import { type Digest, shortId } from '../objects/digest.js'
import { headRef, deleteRef, headTarget, readHead, readRef, tagRef, updateRef } from '../store/refs.js'
import { resolveId } from '../store/resolveId.js'
import type { Store } from '../store/Store.js'
import { withWriteLock } from '../store/storeLock.js'
import { type AdmitTreeArgs, admitTree } from '../world/checkout/admitTree.js'
import { applyTree, assertWorkspaceClean } from '../world/checkout/checkout.js'
import { cameFromElsewhere } from '../world/checkout/cameFromElsewhere.js'
import { recoverCheckout } from '../world/checkout/checkoutJournal.js'
import { MERGE_DRAFT_REF, type MergeState, mergeInProgress, writeMergeState } from '../world/merge/mergeState.js'
import { readChunks, readSnapshot } from '../world/tree/readObjects.js'
import { type Snapshot, makeSnapshot } from '../objects/Snapshot.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { StoreDirectory } from '../world/scan/storeDirectory.js'
import { treeSource } from '../world/tree/treeSource.js'
import { withWorkspaceLock } from '../world/workspace/workspaceLock.js'
import { type ImageMerge, type MergeImagesArgs, mergeImages } from './mergeImages.js'
import type { ModelMergeOptions } from './model/mergeTensors.js'

export interface MergeArgs extends StoreLocator {
  /** The image merged in: an id, short id, head, tag or `HEAD~N`. */
  from: string
  /** The head or tag merged into, in the store only (default: HEAD and the workspace). */
  into?: string
  /** Let `into` name a tag: a tag moves only when asked (RefConflictError, exit 3, otherwise). */
  force?: boolean
  allowUnrelated?: boolean
  message?: string
  allowExternalSymlinks?: boolean
  now?: () => Date
  /** Where FORKPOINT_KEY is read from, to verify and merge the images' ledgers. @default process.env (as `mergeImages`) */
  env?: NodeJS.ProcessEnv
  /** How a model layer both sides changed is merged (unset: a conflict). */
  modelMerge?: ModelMergeOptions
  /** How renames are found in the world (default: 50% similar, 1,000² pairs at most); false: not at all. */
  renames?: MergeImagesArgs['renames']
  /** Take the git config, hooks and `.git` files an image from another store brings (held back otherwise: `heldBack`). */
  trustGit?: boolean
}

/** The image merge, the ref it moved (or would have), whether it stopped with the merge in progress, and what git would run that it held back. */
export type MergeResult = ImageMerge & { ref: string; inProgress: boolean; heldBack: string[] }

/**
 * Merge image `from` into HEAD (the workspace) or into the head or tag `into` (the store
 * only), layer by layer (`mergeImages`). Into HEAD the workspace must be clean; a clean
 * merge or a fast-forward moves the head HEAD follows (compare-and-swap) and turns the workspace
 * into the result (journaled, as checkout is); a conflict leaves the merge in progress:
 * the conflict tree in the workspace and the state in the store, for `continueMerge` or
 * `abortMerge`. Into a ref, a conflict moves nothing. Every result tree goes through
 * `admitTree` before anything is written from it.
 * @throws {UsageError} when a merge is in progress, FROM or TO is unknown, TO is an image id, or they share no history
 * @throws {RefConflictError} when TO is a tag and `force` is not set
 * @throws {DirtyWorkspaceError} when merging into HEAD with uncommitted changes
 * @throws {UnsafePathError} when the result would write outside the workspace (nothing is written)
 */
export async function merge(args: MergeArgs): Promise<MergeResult> {
  const { store, workspace } = await openStore(args)
  if (args.into !== undefined && args.into !== 'HEAD') return mergeIntoRef(store, workspace, args, await refToMerge(store, args.into, args.force ?? false))
  await recoverCheckout(store, workspace)
  if (await mergeInProgress(store)) throw new UsageError("a merge is in progress: finish it with 'forkpoint merge --continue' or undo it with 'forkpoint merge --abort'")
  return withWriteLock(store, () => withWorkspaceLock(store, () => mergeIntoHead(store, workspace, args)))
}

/**
 * The ref `--into NAME` names: a full ref, else the head, else the tag of that name. A tag
 * moves only with `force`, as `tag` moves one; an image id (`sha256:…`, a short id, `main~1`)
 * names no ref to move.
 */
async function refToMerge(store: Store, name: string, force: boolean): Promise<string> {
  const ref = await namedRef(store, name)
  if (ref === null) {
    const isImage = await resolveId(store, name).then(
      () => true,
      () => false,
    )
    const what = isImage ? 'is an image id, not a head or tag' : 'names no head or tag'
    throw new UsageError(`merge --into takes the name of the head or tag it moves: ${JSON.stringify(name)} ${what}`, { into: name })
  }
  if (ref.startsWith('refs/tags/') && !force) {
    const at = await readRef(store, ref)
    throw new RefConflictError(`merge --into: ${name} is a tag, moved only with -f: 'forkpoint merge FROM --into ${name} -f'`, { ref, actual: at, expected: null })
  }
  return ref
}

/** The ref `name` names in the store (a full ref name is taken as it is), or null for none or a name no ref can have. */
async function namedRef(store: Store, name: string): Promise<string | null> {
  try {
    if (name.startsWith('refs/')) return headRef(name)
    for (const ref of [headRef(name), tagRef(name)]) if ((await readRef(store, ref)) !== null) return ref
    return null
  } catch (err) {
    if (err instanceof UsageError) return null
    throw err
  }
}

async function mergeIntoRef(store: Store, workspace: string, args: MergeArgs, ref: string): Promise<MergeResult> {
  return withWriteLock(store, async () => {
    const ours = await readRef(store, ref)
    if (ours === null) throw new UsageError(`merge --into: ${ref} does not exist`, { ref })
    const result = await mergeImages({ store, ours, ...imageMergeArgs(args) })
    if (result.outcome === 'fast-forward' || result.outcome === 'merged') {
      await admit(store, workspace, (await readSnapshot(store, result.id)).world.tree, args)
      await store.sync()
      await updateRef({ store, name: ref, id: result.id, expected: ours, message: `merge ${args.from}: ${result.outcome}` })
    }
    return { heldBack: [], ...result, ref, inProgress: false }
  })
}

async function mergeIntoHead(store: Store, workspace: string, args: MergeArgs): Promise<MergeResult> {
  const cleanScan = await assertWorkspaceClean(store, workspace)
  const head = await readHead(store)
  const ref = await headTarget(store)
  const ours = await readRef(store, 'HEAD')
  const result: ImageMerge = ours ? await mergeImages({ store, ours, ...imageMergeArgs(args) }) : { outcome: 'fast-forward', id: await resolveId(store, args.from), layers: [] } // nothing to merge into yet
  if (result.outcome === 'up-to-date') return { ...result, ref, inProgress: false, heldBack: [] }
  if (result.outcome === 'conflict') {
    await admit(store, workspace, result.tree, args, { tree: cleanScan.tree, files: cleanScan.files })
    await recordInProgress(store, ours!, result, args)
    await applyTree({ store, workspace, tree: result.tree, head: headText(head, ours!), force: false, allowExternalSymlinks: args.allowExternalSymlinks, cleanScan })
    return { ...result, ref, inProgress: true }
  }
  const tree = (await readSnapshot(store, result.id)).world.tree
  await store.sync() // the merge snapshot is durable before the ref names it
  const move = { name: ref, id: result.id, expected: ours, message: `merge ${args.from}: ${result.outcome}` }
  // a fast-forward to an image from another store writes it as a checkout of it does; a merge snapshot is held back already
  const holdBack = result.outcome === 'fast-forward' && !args.trustGit && (await cameFromElsewhere(store, result.id))
  // holding git files back walks the tree: admitted first, each shared subtree costed once; applyTree admits it otherwise
  if (holdBack) await admit(store, workspace, tree, args, { tree: cleanScan.tree, files: cleanScan.files })
  const applied = await applyTree({
    store,
    workspace,
    tree,
    head: headText(head, result.id),
    ref: move,
    force: false,
    allowExternalSymlinks: args.allowExternalSymlinks,
    cleanScan,
    holdBackGit: holdBack,
  })
  return { ...result, ref, inProgress: false, heldBack: result.outcome === 'merged' ? result.heldBack : applied.heldBack }
}

function imageMergeArgs({ from, allowUnrelated, message, now, modelMerge, renames, env, trustGit }: MergeArgs): Omit<MergeImagesArgs, 'ours'> {
  return { theirs: from, allowUnrelated, message, now, modelMerge, renames, env, trustGit }
}

/** The HEAD file's text once HEAD is at `id`: the head it follows, unchanged, or `id` itself when detached. */
function headText(head: Awaited<ReturnType<typeof readHead>>, id: Digest): string {
  return head.type === 'symbolic' ? `ref: ${head.ref}\n` : `${id}\n`
}

/** Refuse a result tree that could not be checked out here (a path out of the workspace, into the store, too long) before anything is written from it. */
async function admit(store: Store, workspace: string, tree: Digest, args: MergeArgs, onDisk?: AdmitTreeArgs['onDisk']): Promise<void> {
  await admitTree({
    source: treeSource(store),
    chunks: (digest) => readChunks(store, digest),
    tree,
    root: workspace,
    store: new StoreDirectory(store.root),
    allowExternalSymlinks: args.allowExternalSymlinks ?? false,
    ...(onDisk ? { onDisk } : {}),
  })
}

/** The draft (parents, conflict tree, decided layers) kept by a ref, then the state that names it. */
async function recordInProgress(store: Store, ours: Digest, result: Extract<ImageMerge, { outcome: 'conflict' }>, args: MergeArgs): Promise<void> {
  const theirs = await resolveId(store, args.from)
  const message = args.message ?? `merge ${shortId(theirs)} into ${shortId(ours)}`
  const draft: Snapshot = {
    ...makeSnapshot({ parents: [ours, theirs], tree: result.tree, env: result.decided.env, message, createdAt: (args.now ?? (() => new Date()))() }),
    ...result.decided.layers,
  }
  const id = await store.writeObject(draft)
  await deleteRef(store, MERGE_DRAFT_REF) // left by a merge that stopped before its state was written
  await createRefs(store, [{ name: MERGE_DRAFT_REF, id }])
  const state: MergeState = {
    kind: 'merge-state',
    schemaVersion: 1,
    ours,
    theirs,
    bases: result.bases,
    draft: id,
    conflicts: result.conflicts,
    layerConflicts: result.layerConflicts,
    layers: result.layers,
    message,
  }
  await writeMergeState(store, state)
}
