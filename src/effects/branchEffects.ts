import { abortCommit } from '../branch/commit/abortCommit.js'
import { Branch } from '../branch/Branch.js'
import { readCommitState } from '../world/merge/commitState.js'
import { listStates } from '../branch/lifecycle/branchStore.js'
import { assertNoRunIn } from '../branch/lifecycle/closingMark.js'
import { liveState } from '../branch/lifecycle/liveBranch.js'
import { Workspace } from '../branch/Workspace.js'
import type { StoreLocator } from '../store/findStore.js'
import type { CommitResult, ConflictPolicy, InProgressOptions } from '../branch/types.js'
import { readdir } from 'node:fs/promises'
import { keyState } from './ledgerState.js'
import { listEffects } from './listEffects.js'
import type { Store } from '../store/Store.js'
import type { EffectsCommitResult } from './Effects.js'
import type { LedgerEntry } from '../objects/Ledger.js'
import { discardOutbox, dropOutbox, handOverOutbox, verifyOutbox } from './outbox.js'
import { LedgerTamperedError } from '../errors/index.js'
import { type SentEffects, sendUnsent } from './sendUnsent.js'
import { type StepHook, noSteps } from './stepHook.js'

/**
 * A branch commit and what its outbox did: its deferred effects executed (by this commit, or
 * earlier by a sibling's) or moved up to a parent branch (`handedUp`); `sent`: the requests
 * this commit actually sent (an earlier commit's unsent ones included).
 */
export type CommitWithEffectsResult = CommitResult & { effects: EffectsCommitResult & SentEffects }

export interface CommitWithEffectsOptions extends InProgressOptions {
  onConflict?: ConflictPolicy
  /** Apply the `.git/config`, hooks and `.git` files the branch wrote (held back otherwise). */
  trustGit?: boolean
  /** Where FORKPOINT_KEY is read from: the caller's environment, passed down from its edge. */
  env: NodeJS.ProcessEnv
  /** Told each durable step (tests stop the process there). */
  onStep?: StepHook
}

/**
 * Commit a branch with its outbox, write-ahead: the outbox is verified before anything
 * moves, handed into the parent's ledger once the files are staged and before they are put
 * in place, then (into the workspace) each waiting request is sent once per key, its intent
 * saved before it leaves. A crash at any point leaves the outbox in a ledger, and
 * `sendUnsent` (the next commit, `status`, `forkpoint effects recover`) finishes it.
 * @throws {LedgerTamperedError} (exit 5) the outbox fails verification: nothing is applied
 * @throws {ConflictError} @throws {BranchStaleError} as `Branch.commit`; nothing is sent then
 */
export async function commitWithEffects(branch: Branch, { env, onStep = noSteps, ...options }: CommitWithEffectsOptions): Promise<CommitWithEffectsResult> {
  const store = branch.workspace.store
  const into = branch.parent instanceof Branch ? branch.parent.id : null
  await onStep('commit:start')
  await verifyOutbox({ store, branchId: branch.id, env })
  await onStep('commit:verified')
  let waiting: LedgerEntry[] = []
  const result = await branch.commit({
    ...options,
    beforeApply: async () => void (waiting = await handOverOutbox({ store, branchId: branch.id, into, env, onStep })),
  })
  await onStep('commit:applied')
  if (into) return { ...result, effects: { executed: [], handedUp: waiting, sent: [], resent: [] } }
  const sent = await sendUnsent({ store, env, onStep })
  return { ...result, effects: { executed: await executedNow(store, waiting, env), handedUp: [], ...sent } }
}

/** The workspace's executed entries of the keys a commit handed over (sent now, or already by a sibling). */
async function executedNow(store: Store, handed: LedgerEntry[], env: NodeJS.ProcessEnv): Promise<LedgerEntry[]> {
  if (handed.length === 0) return []
  const { entries } = await listEffects({ store, env })
  return handed.map((e) => keyState(entries, e.idempotencyKey)).filter((e): e is LedgerEntry => e?.status === 'executed')
}

/** What an abort did with the outboxes of the branch and its children. */
export interface AbortedOutboxes {
  /** Deferred effects recorded dropped: never sent. */
  dropped: LedgerEntry[]
  /** Outboxes that failed verification: discarded unsent and unmerged (their ids stay in the reflog), one line each. */
  discarded: string[]
}

/** Abort a branch, then record its outbox (and its children's) dropped: nothing of it is ever sent. `env`: where FORKPOINT_KEY is read from, for the ledgers the drops are recorded in. */
export async function abortWithEffects(branch: Branch, { env }: { env: NodeJS.ProcessEnv }): Promise<LedgerEntry[]> {
  return (await abortWithOutboxes(branch, env)).dropped
}

async function abortWithOutboxes(branch: Branch, env: NodeJS.ProcessEnv): Promise<AbortedOutboxes> {
  const store = branch.workspace.store
  // most branches have no outbox: then no branch list is read
  const ids = (await readdir(store.path('refs', 'effects', 'branches')).catch(() => [])).length > 0 ? await withDescendants(store, branch.id) : []
  await branch.abort()
  return dropAll(store, ids, env)
}

/** `forkpoint commit NAME`: `commitWithEffects` for a branch named by the CLI. */
export async function commitNamedWithEffects({
  name,
  onConflict,
  stopOnConflict,
  resume,
  keepLeftovers,
  trustGit,
  onStep,
  env,
  ...ref
}: StoreLocator & { name: string } & CommitWithEffectsOptions): Promise<CommitWithEffectsResult> {
  const options = {
    env,
    ...(trustGit ? { trustGit } : {}),
    ...(onStep ? { onStep } : {}),
    ...(onConflict ? { onConflict } : {}),
    ...(stopOnConflict ? { stopOnConflict } : {}),
    ...(resume ? { resume } : {}),
    ...(keepLeftovers ? { keepLeftovers } : {}),
  }
  return commitWithEffects(await (await Workspace.open(ref)).openBranch(name), options)
}

/** `forkpoint abort NAME`: the branch and its children aborted, their outboxes dropped; a commit of it in progress is undone first. */
export async function abortNamedWithEffects({ name, env, ...ref }: StoreLocator & { name: string; env: NodeJS.ProcessEnv }): Promise<{ aborted: string } & AbortedOutboxes> {
  const workspace = await Workspace.open(ref)
  const branch = await workspace.openBranch(name)
  if ((await readCommitState(workspace.store))?.branch === name) {
    // refused before the stopped commit is undone, not after
    await assertNoRunIn(workspace.store, await liveState(workspace.store, branch.id), 'abort')
    await abortCommit({ ...ref, name })
  }
  return { aborted: name, ...(await abortWithOutboxes(branch, env)) }
}

/** The branch and every branch made from it, children first (their outboxes are dropped before their parent's). */
async function withDescendants(store: Store, id: string): Promise<string[]> {
  const states = await listStates(store)
  const below = (parent: string): string[] => states.filter((s) => s.parent === parent).flatMap((s) => [...below(s.id), s.id])
  return [...below(id), id]
}

/** Each outbox dropped; one that fails verification is discarded whole instead, so an aborted branch never blocks on bad data. */
async function dropAll(store: Store, ids: string[], env: NodeJS.ProcessEnv): Promise<AbortedOutboxes> {
  const result: AbortedOutboxes = { dropped: [], discarded: [] }
  for (const branchId of ids) {
    try {
      result.dropped.push(...(await dropOutbox({ store, branchId, env })))
    } catch (err) {
      if (!(err instanceof LedgerTamperedError)) throw err
      await discardOutbox({ store, branchId })
      result.discarded.push(`${err.message}: discarded unsent`)
    }
  }
  return result
}
