import { verifyLedger } from '../effects/verifyLedger.js'
import { EncryptionKeyError, LedgerTamperedError } from '../errors/index.js'
import type { Digest } from '../store/digest.js'
import { gcRoots } from '../store/gcRoots.js'
import type { Store } from '../store/Store.js'
import type { Snapshot } from '../world/Snapshot.js'

export interface LedgerProblem {
  ledger: Digest
  /** An image whose effects layer it is. */
  image: Digest
  /** LedgerTamperedError's `data.reason`: chain, head, seq, conflict, malformed, ... */
  reason: string
  message: string
}

export interface VerifyLedgersResult {
  checked: number
  /** HMAC-chained ledgers left unchecked: FORKPOINT_KEY is not set. */
  unkeyed: Digest[]
  problems: LedgerProblem[]
}

/**
 * Check whole (shape, chain or HMAC, head, one result per key) every ledger that an image
 * kept by the store's refs and reflogs, or any of their ancestors, names as its effects
 * layer. Objects that are missing or do not hash right are `verify`'s to report.
 */
export async function verifyLedgers({ store, env = process.env }: { store: Store; env?: NodeJS.ProcessEnv }): Promise<VerifyLedgersResult> {
  const ledgers = await imageLedgers(store)
  const result: VerifyLedgersResult = { checked: 0, unkeyed: [], problems: [] }
  for (const [ledger, image] of ledgers) {
    try {
      await verifyLedger({ store, ledger, env })
      result.checked++
    } catch (err) {
      if (err instanceof EncryptionKeyError) result.unkeyed.push(ledger)
      else if (err instanceof LedgerTamperedError) result.problems.push({ ledger, image, reason: String(err.data['reason'] ?? 'tampered'), message: err.message })
      else throw err
    }
  }
  return result
}

/** Each ledger named by a reachable image, with one image that names it. */
async function imageLedgers(store: Store): Promise<Map<Digest, Digest>> {
  const ledgers = new Map<Digest, Digest>()
  const seen = new Set<Digest>()
  const queue = [...(await gcRoots(store))]
  while (queue.length > 0) {
    const id = queue.pop()!
    if (seen.has(id)) continue
    seen.add(id)
    const object = await store.readObject(id).catch(() => null) // not a structured object, missing or corrupt: verify's part
    if (object?.kind !== 'snapshot') continue
    const snapshot = object as unknown as Snapshot
    if (typeof snapshot.effects === 'string' && !ledgers.has(snapshot.effects)) ledgers.set(snapshot.effects, id)
    if (Array.isArray(snapshot.parents)) queue.push(...snapshot.parents)
  }
  return ledgers
}
