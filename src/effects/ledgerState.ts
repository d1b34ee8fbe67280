import type { EffectRecord, LedgerEntry } from '../objects/Ledger.js'

/**
 * Where one idempotency key stands: `executed` once any entry executed it (executing is
 * final); otherwise the status of its latest entry. Reads are never looked up: each read runs.
 */
export function keyState<T extends EffectRecord>(entries: readonly T[], key: string): T | null {
  let latest: T | null = null
  for (const entry of entries) {
    if (entry.class === 'read' || entry.idempotencyKey !== key) continue
    if (entry.status === 'executed') return entry
    latest = entry
  }
  return latest
}

/** The outbox: per key still waiting (`deferred`, or `sending` with no answer recorded), its state, in ledger order. */
export function pendingEntries(entries: readonly LedgerEntry[]): LedgerEntry[] {
  const waiting = (e: LedgerEntry) => e.status === 'deferred' || e.status === 'sending'
  const keys = new Set(entries.filter(waiting).map((e) => e.idempotencyKey))
  return statesOf(entries, keys).filter(waiting)
}

/**
 * Effects sent again after an attempt whose outcome was unknown (two `sending` entries for
 * one key): a service that ignores Idempotency-Key may have received them twice. Per key, its state.
 */
export function uncertainEntries(entries: readonly LedgerEntry[]): LedgerEntry[] {
  const attempts = new Map<string, number>()
  for (const e of entries) if (e.status === 'sending') attempts.set(e.idempotencyKey, (attempts.get(e.idempotencyKey) ?? 0) + 1)
  return statesOf(entries, new Set([...attempts].filter(([, n]) => n > 1).map(([key]) => key)))
}

function statesOf(entries: readonly LedgerEntry[], keys: Set<string>): LedgerEntry[] {
  return [...keys]
    .map((key) => keyState(entries, key))
    .filter((entry): entry is LedgerEntry => entry !== null)
    .sort((a, b) => a.seq - b.seq)
}

export interface KeyConflict {
  idempotencyKey: string
  reason: 'args' | 'result'
  /** The two differing hashes (argsHash or resultHash). */
  hashes: [string, string]
}

/** A key executed twice with different arguments or results: one key must mean one effect. Reads may differ. */
export function findKeyConflict(entries: readonly EffectRecord[]): KeyConflict | null {
  const first = new Map<string, EffectRecord>()
  for (const entry of entries) {
    if (entry.class === 'read' || entry.status !== 'executed') continue
    const seen = first.get(entry.idempotencyKey)
    if (!seen) first.set(entry.idempotencyKey, entry)
    else if (seen.argsHash !== entry.argsHash) return conflict(entry.idempotencyKey, 'args', seen.argsHash, entry.argsHash)
    else if (seen.resultHash !== entry.resultHash) return conflict(entry.idempotencyKey, 'result', String(seen.resultHash), String(entry.resultHash))
  }
  return null
}

function conflict(idempotencyKey: string, reason: KeyConflict['reason'], a: string, b: string): KeyConflict {
  return { idempotencyKey, reason, hashes: [a, b] }
}
