import { LedgerTamperedError } from '../errors/index.js'
import { type Digest, isDigest } from '../store/digest.js'
import { jsonDataProblem } from '../util/jsonDataProblem.js'

export const EFFECT_CLASSES = ['read', 'idempotent', 'irreversible'] as const
/** `read` changes nothing outside; `idempotent` may be repeated safely; `irreversible` must happen at most once. */
export type EffectClass = (typeof EFFECT_CLASSES)[number]

/**
 * `deferred`: held in an outbox; `sending`: about to be sent (the intent, durable before the
 * request leaves, so a crash leaves it uncertain rather than unrecorded); `executed`: done,
 * with its result; `dropped`: never to run.
 */
export const EFFECT_STATUSES = ['executed', 'deferred', 'sending', 'dropped'] as const
export type EffectStatus = (typeof EFFECT_STATUSES)[number]

/** What an entry says happened, before it is placed in the chain. */
export interface EffectRecord {
  /** ISO time of the call (the union orders by it). */
  at: string
  tool: string
  /** The `effect-args` object holding the call's arguments. */
  argsHash: Digest
  idempotencyKey: string
  class: EffectClass
  status: EffectStatus
  /** The `effect-result` object holding what the tool returned; null unless `executed`. */
  resultHash: Digest | null
}

/** One link of the chain: `prev` is the chain hash of the previous entry's canonical bytes. */
export interface LedgerEntry extends EffectRecord {
  seq: number
  prev: string
}

export type ChainInfo = { alg: 'sha256' } | { alg: 'hmac-sha256'; keyCheck: string }

/** The `ledger` object: entries in order, and `head`, the chain hash over the count and the last entry. */
export type Ledger = {
  kind: 'ledger'
  schemaVersion: 1
  chain: ChainInfo
  entries: LedgerEntry[]
  head: string
}

const HEX64 = /^[0-9a-f]{64}$/

/** Check a parsed `ledger` object's shape (not its chain: see checkChain); LedgerTamperedError when it is malformed. */
export function validateLedger(value: unknown, where: string): Ledger {
  const problem = jsonDataProblem(value)
  if (problem) throw new LedgerTamperedError(`${where} is not a valid effects ledger: it ${problem}`, { ledger: where, reason: 'malformed' })
  const ledger = value as Ledger
  const chainOk = ledger?.chain?.alg === 'sha256' || (ledger?.chain?.alg === 'hmac-sha256' && typeof ledger.chain.keyCheck === 'string')
  if (ledger?.kind !== 'ledger' || !chainOk || !Array.isArray(ledger.entries) || typeof ledger.head !== 'string') {
    throw new LedgerTamperedError(`${where} is not a valid effects ledger`, { ledger: where, reason: 'malformed' })
  }
  const bad = ledger.entries.findIndex((entry) => !isEntry(entry))
  if (bad >= 0) throw new LedgerTamperedError(`${where}: entry ${bad} is malformed`, { ledger: where, reason: 'malformed', seq: bad })
  return ledger
}

function isEntry(entry: LedgerEntry): boolean {
  return (
    Number.isSafeInteger(entry?.seq) &&
    typeof entry.prev === 'string' &&
    HEX64.test(entry.prev) &&
    typeof entry.at === 'string' &&
    !Number.isNaN(Date.parse(entry.at)) &&
    typeof entry.tool === 'string' &&
    isDigest(entry.argsHash) &&
    typeof entry.idempotencyKey === 'string' &&
    EFFECT_CLASSES.includes(entry.class) &&
    EFFECT_STATUSES.includes(entry.status) &&
    (entry.status === 'executed' ? isDigest(entry.resultHash) : entry.resultHash === null)
  )
}

/** The fields of an entry that say what happened, without its place in a chain. */
export function recordOf(entry: LedgerEntry): EffectRecord {
  const { seq: _seq, prev: _prev, ...record } = entry
  return record
}
