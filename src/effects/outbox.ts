import type { Store } from '../store/Store.js'
import { type EffectsContext, WORKSPACE_CONTEXT, contextLedger, contextRef, forgetContextLedger, saveContextLedger, withOutboxLock } from './contextLedger.js'
import type { EffectsCommitResult } from './Effects.js'
import { httpTool } from './HttpEffects.js'
import type { LedgerEntry } from './Ledger.js'
import { mergeLedgers } from './mergeLedgers.js'
import { openEffects } from './openEffects.js'
import { readRef } from '../store/refs.js'
import { verifyLedger } from './verifyLedger.js'

export interface OutboxArgs {
  store: Store
  /** The branch whose outbox it is (its id, as `Branch.id`). */
  branchId: string
  /** Where the branch committed: the workspace (default) or its parent branch's id. */
  into?: string | null
  env?: NodeJS.ProcessEnv
}

/**
 * A branch committed: send its deferred requests, each once per idempotency key (a key a
 * sibling already sent is not sent again: its recorded result is taken), and record them
 * in the workspace's ledger. Into a parent branch nothing is sent: the outbox moves up and
 * goes out when that branch commits. A branch without an outbox has nothing to do.
 * @throws {EffectToolMissingError} a deferred effect that is not an HTTP request (register its tool with `openEffects` and commit it there)
 */
export async function commitOutbox({ store, branchId, into = null, env = process.env }: OutboxArgs): Promise<EffectsCommitResult> {
  const own: EffectsContext = { kind: 'branch', id: branchId }
  const parent: EffectsContext = into ? { kind: 'branch', id: into } : WORKSPACE_CONTEXT
  if (!(await readRef(store, contextRef(own)))) return { executed: [], handedUp: [] } // no outbox: no lock to take
  return withOutboxLock(store, async () => {
    const branchLedger = await readRef(store, contextRef(own))
    if (!branchLedger) return { executed: [], handedUp: [] }
    const parentLedger = await contextLedger(store, parent)
    const root = await openEffects({ store, env, mode: parent.kind === 'branch' ? 'speculative' : 'direct', ...(parentLedger ? { ledger: parentLedger } : {}) })
    const child = root.attach(await verifyLedger({ store, ledger: branchLedger, env }))
    for (const entry of child.pending()) httpTool(child, entry.tool, entry.class)
    let result: EffectsCommitResult
    try {
      result = await child.commit()
    } finally {
      // what ran is recorded even when a later send fails (that one stays in the outbox, for the next commit to retry)
      await saveContextLedger(store, parent, await root.ledger(), `effects: commit of branch ${branchId}`)
    }
    await forgetContextLedger(store, own)
    return result
  })
}

/**
 * A branch was aborted: its deferred requests are recorded `dropped` and never sent. The
 * record goes into the workspace's ledger (or the parent branch's), so `forkpoint effects`
 * shows what was dropped; a dropped key is free to be used again.
 */
export async function dropOutbox({ store, branchId, into = null, env = process.env }: OutboxArgs): Promise<LedgerEntry[]> {
  const own: EffectsContext = { kind: 'branch', id: branchId }
  const parent: EffectsContext = into ? { kind: 'branch', id: into } : WORKSPACE_CONTEXT
  if (!(await readRef(store, contextRef(own)))) return []
  return withOutboxLock(store, async () => {
    const branchLedger = await readRef(store, contextRef(own))
    if (!branchLedger) return []
    const handle = await openEffects({ store, env, ledger: branchLedger, mode: 'speculative' })
    const dropped = await handle.drop()
    const parentLedger = await contextLedger(store, parent)
    const mine = await handle.ledger()
    const merged = parentLedger ? (await mergeLedgers({ store, ours: parentLedger, theirs: mine, env })).digest : mine
    await saveContextLedger(store, parent, merged, `effects: abort of branch ${branchId}`)
    await forgetContextLedger(store, own)
    return dropped
  })
}
