import { verifyLedger } from '../effects/verifyLedger.js'
import { EncryptionKeyError, LedgerTamperedError, ObjectNotFoundError } from '../errors/index.js'
import type { Digest } from '../objects/digest.js'
import { gcRoots } from '../store/gcRoots.js'
import { listRefs } from '../store/refs.js'
import type { Store } from '../store/Store.js'
import type { Snapshot } from '../objects/Snapshot.js'

export interface LedgerProblem {
  ledger: Digest
  /** An image whose effects layer it is (when no ref under `refs/effects/` holds it). */
  image?: Digest
  /** The ref under `refs/effects/` that holds it: the workspace's ledger, a live branch's outbox. */
  ref?: string
  /** LedgerTamperedError's `data.reason`: chain, head, seq, conflict, malformed, ... */
  reason: string
  message: string
}

type Where = Pick<LedgerProblem, 'image' | 'ref'>

export interface VerifyLedgersResult {
  checked: number
  /** HMAC-chained ledgers left unchecked: FORKPOINT_KEY is not set. */
  unkeyed: Digest[]
  problems: LedgerProblem[]
}

/**
 * Check whole (shape, chain or HMAC, head, one result per key) every ledger that a ref under
 * `refs/effects/` holds (the workspace's ledger, each live branch's outbox) and every ledger
 * that an image kept by the store's refs and reflogs, or any of their ancestors, names as its
 * effects layer. Objects that are missing or do not hash right are `verify`'s to report.
 */
export async function verifyLedgers({ store, env }: { store: Store; env: NodeJS.ProcessEnv }): Promise<VerifyLedgersResult> {
  const ledgers = await refLedgers(store, await imageLedgers(store))
  const result: VerifyLedgersResult = { checked: 0, unkeyed: [], problems: [] }
  for (const [ledger, from] of ledgers) {
    try {
      await verifyLedger({ store, ledger, env })
      result.checked++
    } catch (err) {
      if (err instanceof ObjectNotFoundError) continue // missing: verify's to report
      if (err instanceof EncryptionKeyError) result.unkeyed.push(ledger)
      else if (err instanceof LedgerTamperedError) result.problems.push({ ledger, ...from, reason: String(err.data['reason'] ?? 'tampered'), message: err.message })
      else throw err
    }
  }
  return result
}

/** Each ledger held by a ref under `refs/effects/`, added to `ledgers` with its ref (named first: a tampered outbox is reported by its ref). */
async function refLedgers(store: Store, ledgers: Map<Digest, Where>): Promise<Map<Digest, Where>> {
  const held = new Map<Digest, Where>()
  for (const { name, id } of await listRefs(store, 'refs/effects/')) if (!held.has(id)) held.set(id, { ref: name })
  for (const [ledger, from] of ledgers) if (!held.has(ledger)) held.set(ledger, from)
  return held
}

/** Each ledger named by a reachable image, with one image that names it. */
async function imageLedgers(store: Store): Promise<Map<Digest, Where>> {
  const ledgers = new Map<Digest, Where>()
  const seen = new Set<Digest>()
  const queue = [...(await gcRoots(store))]
  while (queue.length > 0) {
    const id = queue.pop()!
    if (seen.has(id)) continue
    seen.add(id)
    const object = await store.readObject(id).catch(() => null) // not a structured object, missing or corrupt: verify's part
    if (object?.kind !== 'snapshot') continue
    const snapshot = object as unknown as Snapshot
    if (typeof snapshot.effects === 'string' && !ledgers.has(snapshot.effects)) ledgers.set(snapshot.effects, { image: id })
    if (Array.isArray(snapshot.parents)) queue.push(...snapshot.parents)
  }
  return ledgers
}
