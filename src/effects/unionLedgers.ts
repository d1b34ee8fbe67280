import { EffectKeyConflictError } from '../errors/index.js'
import { canonicalJson } from '../util/canonicalJson.js'
import type { ChainHasher } from './ChainHasher.js'
import { chainRecords } from './chain.js'
import { type EffectRecord, type Ledger, recordOf } from '../objects/Ledger.js'
import { findKeyConflict } from './ledgerState.js'

/**
 * Both ledgers' entries once each, re-chained in time order: the image merge's effects
 * layer. An entry both sides hold (their common history) appears once: each distinct
 * record is kept as many times as the side holding it most often has it. Ties in time
 * keep `ours` first, then each side's own order.
 * @throws {EffectKeyConflictError} (exit 3) one key executed with two different results or arguments
 */
export function unionLedgers(ours: Ledger, theirs: Ledger, hasher: ChainHasher): Ledger {
  const records = [...ours.entries.map(recordOf), ...onlyTheirs(ours, theirs)]
  const ordered = records
    .map((record, order) => ({ record, order, time: Date.parse(record.at) }))
    .sort((a, b) => a.time - b.time || a.order - b.order)
    .map(({ record }) => record)
  const conflict = findKeyConflict(ordered)
  if (conflict) {
    throw new EffectKeyConflictError(
      `effects merge conflict: key ${JSON.stringify(conflict.idempotencyKey)} was executed with two different ${conflict.reason}s (${conflict.hashes.join(' vs ')}); one key must mean one effect`,
      { idempotencyKey: conflict.idempotencyKey, reason: conflict.reason, hashes: conflict.hashes },
    )
  }
  return chainRecords(ordered, hasher)
}

/** Their records that ours lacks: of each distinct record, the copies past as many as ours holds. */
function onlyTheirs(ours: Ledger, theirs: Ledger): EffectRecord[] {
  const oursHolds = new Map<string, number>()
  for (const entry of ours.entries) {
    const id = canonicalJson(recordOf(entry))
    oursHolds.set(id, (oursHolds.get(id) ?? 0) + 1)
  }
  return theirs.entries.map(recordOf).filter((record) => {
    const id = canonicalJson(record)
    const left = oursHolds.get(id) ?? 0
    oursHolds.set(id, left - 1)
    return left <= 0
  })
}
