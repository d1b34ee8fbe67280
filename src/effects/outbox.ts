import { readRef } from '../store/refs.js'
import type { Store } from '../store/Store.js'
import { type EffectsContext, WORKSPACE_CONTEXT, contextLedger, contextRef, forgetContextLedger, saveContextLedger, withOutboxLock } from './contextLedger.js'
import { ChainHasher } from './ChainHasher.js'
import { appendRecord } from './chain.js'
import { type Ledger, type LedgerEntry, recordOf } from '../objects/Ledger.js'
import { keyState, pendingEntries } from './ledgerState.js'
import { mergeLedgers } from './mergeLedgers.js'
import { openEffects } from './openEffects.js'
import { type StepHook, noSteps } from './stepHook.js'
import { type SentEffects, sendUnsent } from './sendUnsent.js'
import { markUnsent } from './unsentMark.js'
import { verifyLedger } from './verifyLedger.js'

export interface OutboxArgs {
  store: Store
  /** The branch whose outbox it is (its id, as `Branch.id`). */
  branchId: string
  /** Where the branch commits: the workspace (default) or its parent branch's id. */
  into?: string | null
  /** Where FORKPOINT_KEY is read from: the caller's environment, passed down from its edge. */
  env: NodeJS.ProcessEnv
  /** Called at each durable step (tests stop the process there). */
  onStep?: StepHook
}

/**
 * Refuse a branch's outbox that fails verification, before any of the branch's files is
 * applied: the branch and the workspace are left as they are, so it can still be aborted.
 * @throws {LedgerTamperedError} (exit 5)
 */
export async function verifyOutbox({ store, branchId, env }: OutboxArgs): Promise<void> {
  const ledger = await readRef(store, contextRef(branchContext(branchId)))
  if (ledger) await verifyLedger({ store, ledger, env })
}

/**
 * A branch is about to be applied: under the outbox lock, its ledger is merged into its
 * parent's and its own ref removed, before any file moves, so retiring the branch cannot
 * lose its outbox. Into the workspace, its deferred effects are then pending there (the
 * unsent mark written first) until `sendUnsent` sends them; into a parent branch they wait
 * in that branch's outbox. A key a sibling already sent is executed in the parent: not pending.
 * @returns the branch's deferred effects, handed over (a key a sibling sent is executed in the parent already)
 */
export async function handOverOutbox({ store, branchId, into = null, env, onStep = noSteps }: OutboxArgs): Promise<LedgerEntry[]> {
  const own = branchContext(branchId)
  if (!(await readRef(store, contextRef(own)))) return [] // no outbox: no lock to take
  return withOutboxLock(store, async () => {
    const branchLedger = await readRef(store, contextRef(own))
    if (!branchLedger) return []
    await onStep('handover:locked')
    const parent = parentContext(into)
    const parentLedger = await contextLedger(store, parent)
    const mine = await verifyLedger({ store, ledger: branchLedger, env })
    const merged = parentLedger ? (await mergeLedgers({ store, ours: parentLedger, theirs: branchLedger, env })).ledger : mine
    const deferred = pendingEntries(mine.entries)
    const handed = deferAgain(merged, deferred, ChainHasher.forLedger(merged.chain, env, `ledger of branch ${branchId}`))
    const keys = new Set(deferred.map((e) => e.idempotencyKey))
    if (parent.kind === 'workspace' && pendingEntries(handed.entries).some((e) => keys.has(e.idempotencyKey))) await markUnsent(store)
    await onStep('handover:marked')
    const digest = await store.writeObject(handed)
    await store.sync()
    await saveContextLedger(store, parent, digest, `effects: outbox of branch ${branchId} handed over for its commit`)
    await onStep('handover:saved')
    await forgetContextLedger(store, own)
    await onStep('handover:done')
    return deferred
  })
}

/** Hand a branch's outbox to the workspace and send it, without its files (the demo's winner: its files travel by an image merge). */
export async function commitOutbox(args: OutboxArgs): Promise<SentEffects> {
  await handOverOutbox({ ...args, into: null })
  return sendUnsent({ store: args.store, env: args.env })
}

/**
 * A branch was aborted: its deferred requests are recorded `dropped` and never sent. The
 * record goes into the workspace's ledger (or the parent branch's), so `forkpoint effects`
 * shows what was dropped; a dropped key is free to be used again. A key the parent holds
 * (a sibling committed it, or it was there when the branch was made) is left to the parent.
 */
export async function dropOutbox({ store, branchId, into = null, env }: OutboxArgs): Promise<LedgerEntry[]> {
  const own = branchContext(branchId)
  const parent = parentContext(into)
  if (!(await readRef(store, contextRef(own)))) return []
  return withOutboxLock(store, async () => {
    const branchLedger = await readRef(store, contextRef(own))
    if (!branchLedger) return []
    const parentLedger = await contextLedger(store, parent)
    const claimed = parentLedger ? claimedKeys((await verifyLedger({ store, ledger: parentLedger, env })).entries) : new Set<string>()
    const handle = await openEffects({ store, env, ledger: branchLedger, mode: 'speculative' })
    const dropped = await handle.drop({ keep: (key) => claimed.has(key) })
    const mine = await handle.ledger()
    const merged = parentLedger ? (await mergeLedgers({ store, ours: parentLedger, theirs: mine, env })).digest : mine
    await saveContextLedger(store, parent, merged, `effects: abort of branch ${branchId}`)
    await forgetContextLedger(store, own)
    return dropped
  })
}

/** Remove a branch's outbox without reading it (one that fails verification, of an aborted branch): nothing of it is sent or merged; its id stays in the ref's log. */
export async function discardOutbox({ store, branchId }: Pick<OutboxArgs, 'store' | 'branchId'>): Promise<void> {
  await withOutboxLock(store, () => forgetContextLedger(store, branchContext(branchId)))
}

function branchContext(id: string): EffectsContext {
  return { kind: 'branch', id }
}

function parentContext(into: string | null): EffectsContext {
  return into ? branchContext(into) : WORKSPACE_CONTEXT
}

/**
 * The committed branch's effects that the merged ledger shows `dropped` (a sibling holding
 * the same key was aborted after this branch deferred it) deferred once more, now: this
 * branch's commit decides, so they are pending again.
 */
function deferAgain(ledger: Ledger, own: readonly LedgerEntry[], hasher: ChainHasher): Ledger {
  const at = new Date().toISOString()
  return own
    .filter((e) => e.status === 'deferred' && keyState(ledger.entries, e.idempotencyKey)?.status === 'dropped')
    .reduce((next, e) => appendRecord(next, { ...recordOf(e), at }, hasher), ledger)
}

/** Keys a ledger holds deferred, being sent or executed: not a branch's to drop. */
function claimedKeys(entries: readonly LedgerEntry[]): Set<string> {
  const keys = new Set(entries.filter((e) => e.class !== 'read').map((e) => e.idempotencyKey))
  return new Set([...keys].filter((key) => keyState(entries, key)?.status !== 'dropped'))
}
