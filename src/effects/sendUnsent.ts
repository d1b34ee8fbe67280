import { StoreNotFoundError } from '../errors/index.js'
import { readRef } from '../store/refs.js'
import type { Store } from '../store/Store.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { ChainHasher } from './ChainHasher.js'
import { appendRecord } from './chain.js'
import { WORKSPACE_CONTEXT, contextRef, saveContextLedger, withOutboxLock } from './contextLedger.js'
import { readArgs, recordedForm, writeResult } from './effectObjects.js'
import { type HttpEffectArgs, isHttpTool, sendHttpEffect } from './httpEffect.js'
import { type EffectRecord, type Ledger, type LedgerEntry, recordOf } from '../objects/Ledger.js'
import { pendingEntries } from './ledgerState.js'
import { type StepHook, noSteps } from './stepHook.js'
import { clearUnsent, hasUnsent } from './unsentMark.js'
import { verifyLedger } from './verifyLedger.js'
import { counted } from '../util/plural.js'

export interface SendUnsentArgs extends StoreLocator {
  /** Where FORKPOINT_KEY is read from, to verify and extend the ledger: the caller's environment. */
  env: NodeJS.ProcessEnv
  /** Wait for a commit that is sending right now (default), or return at once, sending nothing (the automatic recovery). */
  wait?: boolean
  /** Read the workspace's ledger even when no effect is marked unsent (`forkpoint effects recover`). */
  always?: boolean
  onStep?: StepHook
}

export interface SentEffects {
  /** The `executed` entries of the requests sent now, each after its intent was saved. */
  sent: LedgerEntry[]
  /** Those of `sent` whose earlier attempt has no recorded answer (a crash): a service ignoring Idempotency-Key may have had them twice. */
  resent: LedgerEntry[]
}

/**
 * Send every HTTP effect waiting in the workspace's ledger: committed (`deferred`) or sent
 * with no answer recorded (`sending`: a crash). Before each request a `sending` entry (the
 * intent) is durable; after the answer, `executed` with the result. A resend carries the
 * same Idempotency-Key and the agent's headers. Under the outbox lock, so one process sends a key.
 * @throws {LedgerTamperedError} (exit 5) the workspace's ledger fails verification
 * @example await sendUnsent({ dir: '.', always: true, env: process.env }) // `forkpoint effects recover`
 */
export async function sendUnsent({ env, wait = true, always = false, onStep = noSteps, ...locator }: SendUnsentArgs): Promise<SentEffects> {
  const { store } = await openStore(locator)
  if (!always && !(await hasUnsent(store))) return { sent: [], resent: [] }
  return (await withOutboxLock(store, () => sendAll(store, env, onStep), { wait })) ?? { sent: [], resent: [] }
}

async function sendAll(store: Store, env: NodeJS.ProcessEnv, onStep: StepHook): Promise<SentEffects> {
  await onStep('send:locked')
  const result: SentEffects = { sent: [], resent: [] }
  const digest = await readRef(store, contextRef(WORKSPACE_CONTEXT))
  let ledger = digest ? await verifyLedger({ store, ledger: digest, env }) : null
  const hasher = ledger ? ChainHasher.forLedger(ledger.chain, env, `ledger ${digest}`) : null
  for (const entry of ledger ? pendingEntries(ledger.entries).filter((e) => isHttpTool(e.tool)) : []) {
    const append = async (record: EffectRecord, message: string): Promise<LedgerEntry> => {
      ledger = appendRecord(ledger!, record, hasher!)
      await save(store, ledger, message)
      return ledger.entries.at(-1)!
    }
    const args = (await readArgs(store, entry.argsHash, `ledger entry ${entry.seq}`)) as HttpEffectArgs
    await onStep('send:intent')
    await append({ ...recordOf(entry), at: new Date().toISOString(), status: 'sending', resultHash: null }, `effects: sending ${entry.tool}`)
    await onStep('send:intent-saved')
    const answer = recordedForm(entry.tool, await sendHttpEffect(args))
    await onStep('send:answered')
    const done = await append(
      { ...recordOf(entry), at: new Date().toISOString(), status: 'executed', resultHash: await writeResult(store, answer.text) },
      `effects: sent ${entry.tool}`,
    )
    result.sent.push(done)
    if (entry.status === 'sending') result.resent.push(done)
    await onStep('send:executed-saved')
  }
  await onStep('send:done')
  await clearUnsent(store)
  return result
}

async function save(store: Store, ledger: Ledger, message: string): Promise<void> {
  const digest = await store.writeObject(ledger)
  await store.sync()
  await saveContextLedger(store, WORKSPACE_CONTEXT, digest, message)
}

/**
 * The automatic recovery (the next `status`, service start): `sendUnsent` that never waits
 * for a commit sending right now, and says in one line what it did or why it could not, so
 * the command it runs in goes on. Null when nothing was waiting.
 */
export async function recoverUnsent(args: Omit<SendUnsentArgs, 'wait' | 'always'>): Promise<string | null> {
  try {
    const { sent, resent } = await sendUnsent({ ...args, wait: false })
    if (sent.length === 0) return null
    return `sent ${counted(sent.length, 'deferred effect')} an interrupted commit left unsent${resent.length > 0 ? `, ${resent.length} of them again after an attempt with no recorded answer (see 'forkpoint effects --uncertain')` : ''}`
  } catch (err) {
    if (err instanceof StoreNotFoundError) return null // the command itself says so
    return `committed effects are still unsent (${(err as Error).message}): run 'forkpoint effects recover'`
  }
}
