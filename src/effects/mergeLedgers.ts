import { openStore, type StoreLocator } from '../store/findStore.js'
import type { Digest } from '../objects/digest.js'
import { ChainHasher } from './ChainHasher.js'
import type { Ledger } from '../objects/Ledger.js'
import { unionLedgers } from './unionLedgers.js'
import { verifyLedger } from './verifyLedger.js'

export interface MergeLedgersArgs extends StoreLocator {
  ours: Digest
  theirs: Digest
  /** Where FORKPOINT_KEY is read from (the result is HMAC-chained when it is set): the caller's environment. */
  env: NodeJS.ProcessEnv
}

/**
 * The effects layer of an image merge: verify both ledgers, take their union by
 * idempotency key re-chained in time order, and store it.
 * @returns the merged ledger and its digest
 * @throws {LedgerTamperedError} (exit 5) either input fails verification
 * @throws {EffectKeyConflictError} (exit 3) one key executed with two different results
 * @example const { digest } = await mergeLedgers({ store, ours: to.effects, theirs: from.effects })
 */
export async function mergeLedgers({ ours, theirs, env, ...locator }: MergeLedgersArgs): Promise<{ digest: Digest; ledger: Ledger }> {
  const { store } = await openStore(locator)
  const [a, b] = await Promise.all([verifyLedger({ store, ledger: ours, env }), verifyLedger({ store, ledger: theirs, env })])
  const ledger = unionLedgers(a, b, ChainHasher.fromEnv(env))
  const digest = await store.writeObject(ledger)
  await store.sync()
  return { digest, ledger }
}
