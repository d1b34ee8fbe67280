import { abortCommit } from '../branch/abortCommit.js'
import { Branch } from '../branch/Branch.js'
import { readCommitState } from '../world/commitState.js'
import { listStates } from '../branch/branchStore.js'
import { Workspace } from '../branch/Workspace.js'
import type { StoreLocator } from '../store/findStore.js'
import type { CommitResult, ConflictPolicy, InProgressOptions } from '../branch/types.js'
import { readdir } from 'node:fs/promises'
import type { Store } from '../store/Store.js'
import type { EffectsCommitResult } from './Effects.js'
import type { LedgerEntry } from './Ledger.js'
import { commitOutbox, dropOutbox } from './outbox.js'

/** A branch commit and what its outbox did: sent (`executed`) or moved up to a parent branch (`handedUp`). */
export type CommitWithEffectsResult = CommitResult & { effects: EffectsCommitResult }

/**
 * Commit a branch and then its outbox: the files first (a conflict leaves both in place),
 * then each deferred request, once per key.
 * @throws {ConflictError} @throws {BranchStaleError} as `Branch.commit`; nothing is sent then
 */
export async function commitWithEffects(branch: Branch, options: { onConflict?: ConflictPolicy } & InProgressOptions = {}): Promise<CommitWithEffectsResult> {
  const result = await branch.commit(options)
  const effects = await commitOutbox({ store: branch.workspace.store, branchId: branch.id, into: branch.parent instanceof Branch ? branch.parent.id : null })
  return { ...result, effects }
}

/** Abort a branch, then record its outbox (and its children's) dropped: nothing of it is ever sent. */
export async function abortWithEffects(branch: Branch): Promise<LedgerEntry[]> {
  const store = branch.workspace.store
  // most branches have no outbox: then no branch list is read
  const ids = (await readdir(store.path('refs', 'effects', 'branches')).catch(() => [])).length > 0 ? await withDescendants(store, branch.id) : []
  await branch.abort()
  return dropAll(store, ids)
}

/** `forkpoint commit NAME`: `commitWithEffects` for a branch named by the CLI. */
export async function commitNamedWithEffects({
  name,
  onConflict,
  stopOnConflict,
  resume,
  keepLeftovers,
  ...ref
}: StoreLocator & { name: string; onConflict?: ConflictPolicy } & InProgressOptions): Promise<CommitWithEffectsResult> {
  const options = {
    ...(onConflict ? { onConflict } : {}),
    ...(stopOnConflict ? { stopOnConflict } : {}),
    ...(resume ? { resume } : {}),
    ...(keepLeftovers ? { keepLeftovers } : {}),
  }
  return commitWithEffects(await (await Workspace.open(ref)).openBranch(name), options)
}

/** `forkpoint abort NAME`: the branch and its children aborted, their outboxes dropped; a commit of it in progress is undone first. */
export async function abortNamedWithEffects({ name, ...ref }: StoreLocator & { name: string }): Promise<{ aborted: string; dropped: LedgerEntry[] }> {
  const workspace = await Workspace.open(ref)
  const branch = await workspace.openBranch(name)
  if ((await readCommitState(workspace.store))?.branch === name) await abortCommit({ ...ref, name })
  return { aborted: name, dropped: await abortWithEffects(branch) }
}

/** The branch and every branch made from it, children first (their outboxes are dropped before their parent's). */
async function withDescendants(store: Store, id: string): Promise<string[]> {
  const states = await listStates(store)
  const below = (parent: string): string[] => states.filter((s) => s.parent === parent).flatMap((s) => [...below(s.id), s.id])
  return [...below(id), id]
}

async function dropAll(store: Store, ids: string[]): Promise<LedgerEntry[]> {
  const dropped: LedgerEntry[] = []
  for (const branchId of ids) dropped.push(...(await dropOutbox({ store, branchId })))
  return dropped
}
