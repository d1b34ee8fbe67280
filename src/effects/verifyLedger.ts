import { openStore, type StoreLocator } from '../store/findStore.js'
import { CorruptDataError, LedgerTamperedError } from '../errors/index.js'
import type { Digest } from '../objects/digest.js'
import type { Store } from '../store/Store.js'
import { ChainHasher } from './ChainHasher.js'
import { checkChain } from './chain.js'
import { readArgs, readResult } from './effectObjects.js'
import { type Ledger, validateLedger } from '../objects/Ledger.js'
import { findKeyConflict } from './ledgerState.js'

export interface VerifyLedgerArgs extends StoreLocator {
  /** The `ledger` object to check. */
  ledger: Digest
  /** Where FORKPOINT_KEY is read from: the caller's environment. */
  env: NodeJS.ProcessEnv
}

/**
 * Read a ledger and refuse it unless every part holds: its shape, its chain (plain or
 * HMAC), its head, one result per executed key, and every entry's args and result objects
 * present and of the right kind.
 * @returns the verified ledger
 * @throws {LedgerTamperedError} (exit 5) on any failure; `data.reason` says which
 * @throws {EncryptionKeyError} an HMAC-chained ledger and no FORKPOINT_KEY
 * @example const ledger = await verifyLedger({ store, ledger: snapshot.effects })
 */
export async function verifyLedger({ ledger: digest, env, ...locator }: VerifyLedgerArgs): Promise<Ledger> {
  const { store } = await openStore(locator)
  const where = `ledger ${digest}`
  const ledger = validateLedger(await readLedgerObject(store, digest, where), where)
  checkChain(ledger, ChainHasher.forLedger(ledger.chain, env, where), where)
  const conflict = findKeyConflict(ledger.entries)
  if (conflict) {
    throw new LedgerTamperedError(`${where} records key ${JSON.stringify(conflict.idempotencyKey)} executed with two different ${conflict.reason}s`, {
      ledger: where,
      reason: 'conflict',
      idempotencyKey: conflict.idempotencyKey,
      differs: conflict.reason,
      hashes: conflict.hashes,
    })
  }
  for (const entry of ledger.entries) {
    const at = `${where} entry ${entry.seq}`
    await readArgs(store, entry.argsHash, at)
    if (entry.resultHash) await readResult(store, entry.resultHash, at)
  }
  return ledger
}

async function readLedgerObject(store: Store, digest: Digest, where: string): Promise<unknown> {
  try {
    return await store.readObject(digest, 'ledger')
  } catch (err) {
    if (!(err instanceof CorruptDataError)) throw err
    throw new LedgerTamperedError(`${where} is not a valid effects ledger: ${err.message}`, { ledger: where, reason: 'malformed' }, { cause: err })
  }
}
