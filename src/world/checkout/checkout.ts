import { randomBytes } from 'node:crypto'
import { mkdirSync, promises as fs, symlinkSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { DirtyWorkspaceError, TargetNotEmptyError, UsageError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import { headRef, readRef } from '../../store/refs.js'
import { resolveId } from '../../store/resolveId.js'
import type { Store } from '../../store/Store.js'
import { withWriteLock } from '../../store/storeLock.js'
import { type CheckoutJournal, type CheckoutStep, type JournalRef, dropJournal, moveJournalRef, recoverCheckout, runJournal, stepFile, writeJournal } from './checkoutJournal.js'
import { admitTree } from './admitTree.js'
import { admitCheckoutCost } from './checkoutCost.js'
import { type EntryChange, changedEntries } from '../diff/diffTrees.js'
import { sameStaging } from '../scan/gitIndex.js'
import { type CopyMethod, type FileWrite, layOut, materializeTree, probeCopyMethod, writeFiles } from './materializeTree.js'
import { fsPath, lstatPath } from '../../util/fsName.js'
import { quotePath } from '../diff/quotePath.js'
import { readChunks, readSnapshot } from '../tree/readObjects.js'
import { type Limits, resolveLimits } from '../../util/limits.js'
import { StoreDirectory } from '../scan/storeDirectory.js'
import { type ScanResult, scanWorkspace } from '../scan/scanWorkspace.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import type { Tree } from '../../objects/Tree.js'
import { EMPTY_TREE, type TreeSource, joinPath, sameEntry, treeSource, zipEntries } from '../tree/treeSource.js'
import { respectGitignore } from '../workspace/workspaceConfig.js'
import { cameFromElsewhere } from './cameFromElsewhere.js'
import { entryAt } from '../tree/entryAt.js'
import { holdBackGit } from './holdBackGit.js'
import { withWorkspaceLock } from '../workspace/workspaceLock.js'
import { errnoCode } from '../../util/fsx.js'

export interface CheckoutArgs extends StoreLocator {
  /** A snapshot id, short id, head, tag or `HEAD~N`. */
  id: string
  /** Materialize into this new (or empty) directory instead of the workspace. */
  into?: string
  /** Overwrite uncommitted changes in the workspace. */
  force?: boolean
  allowExternalSymlinks?: boolean
  /** Take `.git/config`, `.git/hooks/` and `.git` files of an image from another store as they are (`holdBackGit`). */
  trustGit?: boolean
  method?: CopyMethod | 'auto'
  onProgress?: (done: number, total: number) => void
  /** The budget the checkout keeps to (bytes and paths it writes, how deep: docs/untrusted-input.md); default: environment, then DEFAULT_LIMITS. */
  limits?: Partial<Limits>
}

export interface CheckoutResult {
  id: Digest
  tree: Digest
  target: string
  mode: 'into' | 'in-place'
  /** Paths written or removed (in place), or files written (into). */
  changed: number
  /** Regular files in the tree checked out (as `snapshot` counts them). */
  files: number
  method: CopyMethod
  /** Files of an image from another store not written (git would run them); `trustGit` writes them. */
  heldBack: string[]
}

/**
 * Materialize a snapshot: into a fresh directory, or over the workspace itself (atomically).
 * A snapshot that came from another store has its git config, hooks and `.git` files held
 * back unless `trustGit` (`holdBackGit`); in place, the workspace keeps its own there.
 */
export async function checkout(args: CheckoutArgs): Promise<CheckoutResult> {
  const { store, workspace } = await openStore(args)
  const id = await resolveId(store, args.id)
  const snapshot = await readSnapshot(store, id)
  const tree = snapshot.world.tree
  const holdBack = !args.trustGit && (await cameFromElsewhere(store, id))
  // holding git files back walks the tree: a foreign tree is admitted first, each shared subtree costed once
  if (holdBack) await admitCheckoutCost({ tree: treeSource(store), chunks: (d) => readChunks(store, d) }, tree, resolveLimits(args.limits), `tree ${tree}`)
  if (args.into) return checkoutInto(store, id, tree, resolve(args.into), args, holdBack)
  await recoverCheckout(store, workspace, { discard: args.force ?? false })
  return withWriteLock(store, () => withWorkspaceLock(store, () => checkoutInPlace(store, workspace, id, tree, args, holdBack)))
}

/** A new name beside `target`, hidden, for what becomes `target` by a rename once complete. */
export function hiddenSibling(target: string): string {
  return join(dirname(target), `.${basename(target)}.forkpoint-tmp-${randomBytes(4).toString('hex')}`)
}

async function checkoutInto(store: Store, id: Digest, wanted: Digest, target: string, args: CheckoutArgs, holdBack: boolean): Promise<CheckoutResult> {
  const existing = await fs.readdir(target).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null
    if (err.code === 'ENOTDIR') return ['(a file)']
    throw err
  })
  if (existing && existing.length > 0) throw new TargetNotEmptyError(`checkout target ${target} exists and is not empty`, { target })
  const { tree, heldBack } = holdBack ? await holdBackGit({ store, source: treeSource(store), tree: wanted, keep: async () => null }) : { tree: wanted, heldBack: [] }
  const temp = hiddenSibling(target)
  try {
    const result = await materializeTree({
      store,
      source: treeSource(store),
      tree,
      into: temp,
      method: args.method,
      allowExternalSymlinks: args.allowExternalSymlinks,
      onProgress: args.onProgress,
      limits: resolveLimits(args.limits),
    })
    await fs.rename(temp, target)
    return { id, tree: wanted, target, mode: 'into', changed: result.files, files: result.files, method: result.method, heldBack }
  } catch (err) {
    await fs.rm(temp, { recursive: true, force: true })
    throw err
  }
}

async function checkoutInPlace(store: Store, workspace: string, id: Digest, tree: Digest, args: CheckoutArgs, holdBack: boolean): Promise<CheckoutResult> {
  const followed = await headNamed(store, args.id, id)
  const head = followed ? `ref: ${followed}\n` : `${id}\n`
  const applied = await applyTree({
    store,
    workspace,
    tree,
    head,
    force: args.force ?? false,
    allowExternalSymlinks: args.allowExternalSymlinks,
    method: args.method,
    holdBackGit: holdBack,
    limits: resolveLimits(args.limits),
  })
  return { id, tree, target: workspace, mode: 'in-place', ...applied }
}

/** The head `spec` names when it is one that points at `id` (HEAD then follows it), else null: ids, tags and `main~2` detach HEAD. */
async function headNamed(store: Store, spec: string, id: Digest): Promise<string | null> {
  if (/^[0-9a-f]{4,}$|^sha256:/.test(spec)) return null
  try {
    const ref = headRef(spec)
    return ref.startsWith('refs/heads/') && (await readRef(store, ref)) === id ? ref : null
  } catch (err) {
    if (err instanceof UsageError) return null // not a ref name, so not a head
    throw err
  }
}

export interface ApplyTreeArgs {
  store: Store
  workspace: string
  tree: Digest
  /** What the HEAD file holds once the tree is in place. */
  head: string
  /** A ref moved (compare-and-swap) with the tree, as a merge moves the head HEAD follows. */
  ref?: JournalRef
  /** Overwrite uncommitted changes. */
  force: boolean
  allowExternalSymlinks?: boolean | undefined
  method?: CopyMethod | 'auto' | undefined
  /** The caller's scan of the workspace, found clean under the same locks (`assertWorkspaceClean`): not scanned again. */
  cleanScan?: ScanResult | undefined
  /** Leave the workspace's own entries where the tree has git config, hooks or `.git` files (`holdBackGit`). */
  holdBackGit?: boolean
  /** The budget the checkout keeps to (default: environment, then DEFAULT_LIMITS). */
  limits?: Limits | undefined
}

/**
 * Turn the workspace into `tree`, in place and atomically (a journal the next command
 * finishes after a crash), then set HEAD (and move `ref`). The caller holds the store's
 * write lock and the workspace lock, and has finished any interrupted checkout.
 * @throws {DirtyWorkspaceError} when the workspace differs from HEAD and `force` is not set
 * @throws {RefConflictError} when `ref` no longer holds what it was expected to (nothing changed)
 */
export async function applyTree(args: ApplyTreeArgs): Promise<{ changed: number; files: number; method: CopyMethod; heldBack: string[] }> {
  const { store, workspace } = args
  const scan = args.cleanScan ?? (await scanForCheckout(store, workspace))
  const source = treeSource(store, scan.trees)
  if (!args.force && !args.cleanScan) await assertClean(store, workspace, source, scan.tree)
  const { tree, heldBack } = args.holdBackGit
    ? await holdBackGit({ store, source, tree: args.tree, keep: (path) => entryAt(source, scan.tree, path.split('/')) })
    : { tree: args.tree, heldBack: [] }
  const { files } = await admitTree({
    source,
    chunks: (digest) => readChunks(store, digest),
    limits: args.limits,
    tree,
    root: workspace,
    store: new StoreDirectory(store.root),
    allowExternalSymlinks: args.allowExternalSymlinks ?? false,
    onDisk: { tree: scan.tree, files: scan.files },
  })
  const method = args.method && args.method !== 'auto' ? args.method : await probeCopyMethod(store, workspace)
  const staging = store.tempPath('checkout')
  await fs.mkdir(staging)
  let journaled = false
  try {
    const ctx: PlanContext = { workspace, staging, steps: [], files: [], changed: 0 }
    await plan(source, await source(scan.tree), await source(tree), '', ctx)
    await writeFiles(store, ctx.files, method)
    const journal: CheckoutJournal = {
      kind: 'checkout-journal',
      schemaVersion: 1,
      workspace,
      staging: basename(staging),
      steps: ctx.steps,
      head: args.head,
      ...(args.ref ? { ref: args.ref } : {}),
    }
    await writeJournal(store, journal)
    if (args.ref)
      await moveJournalRef(store, args.ref).catch(async (err: unknown) => {
        await dropJournal(store)
        throw err
      })
    journaled = true
    await runJournal(store, journal)
    return { changed: ctx.changed, files, method, heldBack }
  } catch (err) {
    // Once journaled, the staged files belong to the journal: the next command finishes the checkout.
    if (!journaled) await fs.rm(staging, { recursive: true, force: true })
    throw err
  }
}

/** The workspace scanned as a checkout sees it (its ignore rules), nothing written to the store. */
export async function scanForCheckout(store: Store, workspace: string): Promise<ScanResult> {
  return scanWorkspace({ store, dir: workspace, write: false, respectGitignore: await respectGitignore(store, undefined, { remember: false }) })
}

/** Refuse (DirtyWorkspaceError, exit 3) a workspace with changes since HEAD; the scan that found it clean, for `applyTree`. */
export async function assertWorkspaceClean(store: Store, workspace: string): Promise<ScanResult> {
  const scan = await scanForCheckout(store, workspace)
  await assertClean(store, workspace, treeSource(store, scan.trees), scan.tree)
  return scan
}

/**
 * Refuse (DirtyWorkspaceError, exit 3) a workspace whose scanned tree differs from HEAD's.
 * `source` must know the scan's trees. A git index that a `git status` only refreshed
 * (`sameStaging`) is no change: going back overwrites it with the snapshot's.
 */
export async function assertClean(store: Store, workspace: string, source: TreeSource, scanned: Digest): Promise<void> {
  const head = await readRef(store, 'HEAD')
  const headTree = head ? (await readSnapshot(store, head)).world.tree : null
  if (scanned === headTree) return
  const changes: string[] = []
  for await (const c of changedEntries({ source, a: headTree, b: scanned })) if (!(await onlyRefreshed(store, workspace, c))) changes.push(c.path)
  if (changes.length === 0) return
  const paths = changes
  throw new DirtyWorkspaceError(
    `the workspace has uncommitted changes (${paths.slice(0, 5).map(quotePath).join(', ')}${paths.length > 5 ? ', ...' : ''}): snapshot them or pass --force`,
    { paths },
  )
}

/** A git index (`.git/index`, a submodule's too) whose staged entries are HEAD's: only its stat data was refreshed. */
async function onlyRefreshed(store: Store, workspace: string, c: EntryChange): Promise<boolean> {
  const [old, now] = [c.old, c.new]
  if (c.status !== 'modified' || !/(^|\/)\.git\/index$/.test(c.path) || old?.type !== 'file' || now?.type !== 'file' || 'chunks' in old) return false
  const current = await fs.readFile(join(workspace, c.path)).catch(() => null)
  return current !== null && sameStaging(await store.readBlob(old.blob), current)
}

interface PlanContext {
  workspace: string
  staging: string
  steps: CheckoutStep[]
  /** The files to stage for the `place` steps (directories and symlinks are made as the plan goes). */
  files: FileWrite[]
  /** Paths written or removed. */
  changed: number
}

/** The steps that turn tree `from` into tree `to` under `prefix`, with the new content to stage (`admitTree` accepted `to`). */
async function plan(source: TreeSource, from: Tree, to: Tree, prefix: string, ctx: PlanContext): Promise<void> {
  for (const {
    name,
    entries: [cur, next],
  } of zipEntries(from, to)) {
    if (sameEntry(cur, next)) continue
    const path = joinPath(prefix, name)
    if (cur?.type === 'dir' && next?.type === 'dir') {
      await plan(source, await source(cur.tree), await source(next.tree), path, ctx)
      continue
    }
    ctx.changed++
    // Only a path that disappears gets a remove step: an entry being replaced is overwritten
    // by the mkdir or place step itself, so replaying a journal after a crash never removes
    // what an earlier run already placed (and whose staged file is gone).
    if (!next) {
      ctx.steps.push({ op: 'remove', path })
      continue
    }
    if (next.type === 'dir' && (cur || onDisk(ctx.workspace, path))) {
      // over a file, or over a directory the scan ignores (whose contents stay)
      ctx.steps.push({ op: 'mkdir', path })
      await plan(source, EMPTY_TREE, await source(next.tree), path, ctx)
      continue
    }
    const staged = stepFile(ctx.staging, ctx.steps.length)
    if (next.type === 'dir') {
      // a directory new to the workspace is staged whole and placed with one rename
      mkdirSync(staged)
      ctx.changed += await layOut(source, next.tree, staged, path, ctx.files)
    } else if (next.type === 'symlink') symlinkSync(fsPath(next.target), staged)
    else ctx.files.push({ abs: staged, entry: next, rel: path })
    ctx.steps.push({ op: 'place', path })
  }
}

/** Whether anything is at `path` now (a file where a parent directory should be means nothing is). */
function onDisk(workspace: string, path: string): boolean {
  try {
    return lstatPath(join(workspace, path)) !== undefined
  } catch (err) {
    if (errnoCode(err) === 'ENOTDIR') return false
    throw err
  }
}
