import { LedgerTamperedError } from '../errors/index.js'
import { canonicalBytes } from '../util/canonicalJson.js'
import type { ChainHasher } from './ChainHasher.js'
import type { EffectRecord, Ledger, LedgerEntry } from '../objects/Ledger.js'

/** The `prev` of the first entry. */
const GENESIS = '0'.repeat(64)

/** A ledger of `records` in the given order, each linked to the one before. */
export function chainRecords(records: readonly EffectRecord[], hasher: ChainHasher): Ledger {
  return records.reduce((ledger, record) => appendRecord(ledger, record, hasher), emptyLedger(hasher))
}

export function emptyLedger(hasher: ChainHasher): Ledger {
  return { kind: 'ledger', schemaVersion: 1, chain: hasher.info, entries: [], head: headOf([], hasher) }
}

/** A new ledger: `ledger` with `record` linked on at the end (ledgers are values: the input is not changed). */
export function appendRecord(ledger: Ledger, record: EffectRecord, hasher: ChainHasher): Ledger {
  const entries = ledger.entries
  const entry: LedgerEntry = { seq: entries.length, prev: tipOf(entries, hasher), ...record }
  const next = [...entries, entry]
  return { ...ledger, entries: next, head: headOf(next, hasher) }
}

/**
 * Check every link: seq runs 0, 1, 2…, each `prev` is the hash of the entry before, and
 * `head` covers the count and the last entry (so with a key even a dropped last entry shows).
 */
export function checkChain(ledger: Ledger, hasher: ChainHasher, where: string): void {
  let prev = GENESIS
  for (const [i, entry] of ledger.entries.entries()) {
    if (entry.seq !== i) throw tampered(where, 'seq', i, `entry ${i} has seq ${entry.seq}: an entry was removed or reordered`)
    if (entry.prev !== prev) throw tampered(where, 'chain', i, `entry ${i} does not follow the entry before it: an entry was edited, removed or reordered`)
    prev = hasher.link(canonicalBytes(entry))
  }
  if (ledger.head !== headOf(ledger.entries, hasher)) {
    throw tampered(where, 'head', ledger.entries.length, `its head does not match its ${ledger.entries.length} entries: the last entry was edited or removed`)
  }
}

function tipOf(entries: readonly LedgerEntry[], hasher: ChainHasher): string {
  const last = entries.at(-1)
  return last ? hasher.link(canonicalBytes(last)) : GENESIS
}

function headOf(entries: readonly LedgerEntry[], hasher: ChainHasher): string {
  return hasher.link(canonicalBytes({ count: entries.length, tip: tipOf(entries, hasher) }))
}

function tampered(where: string, reason: LedgerTamperedError['data']['reason'], seq: number, what: string): LedgerTamperedError {
  return new LedgerTamperedError(`effects ledger ${where} is tampered: ${what}`, { ledger: where, reason, seq })
}
