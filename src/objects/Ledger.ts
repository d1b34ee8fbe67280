import { z } from 'zod'
import { LedgerTamperedError } from '../errors/index.js'
import { DigestSchema } from './digestSchema.js'
import { jsonDataProblem } from '../util/jsonDataProblem.js'
import type { EdgeRule } from './edges.js'

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
const EffectRecordSchema = z.object({
  /** ISO time of the call (the union orders by it). */
  at: z.string().refine((at) => !Number.isNaN(Date.parse(at))),
  tool: z.string(),
  /** The `effect-args` object holding the call's arguments. */
  argsHash: DigestSchema,
  idempotencyKey: z.string(),
  class: z.enum(EFFECT_CLASSES),
  status: z.enum(EFFECT_STATUSES),
  /** The `effect-result` object holding what the tool returned; null unless `executed`. */
  resultHash: DigestSchema.nullable(),
})
export type EffectRecord = z.infer<typeof EffectRecordSchema>

/** One link of the chain: `prev` is the chain hash of the previous entry's canonical bytes. */
const LedgerEntrySchema = EffectRecordSchema.extend({ seq: z.int(), prev: z.string().regex(/^[0-9a-f]{64}$/) }).refine(
  (entry) => (entry.status === 'executed') === (entry.resultHash !== null),
  'an executed entry has a result, any other none',
)
export type LedgerEntry = z.infer<typeof LedgerEntrySchema>

const ChainInfoSchema = z.discriminatedUnion('alg', [z.object({ alg: z.literal('sha256') }), z.object({ alg: z.literal('hmac-sha256'), keyCheck: z.string() })])
export type ChainInfo = z.infer<typeof ChainInfoSchema>

/** The `ledger` object: entries in order, and `head`, the chain hash over the count and the last entry. */
export const LedgerSchema = z.object({
  kind: z.literal('ledger'),
  schemaVersion: z.literal(1),
  chain: ChainInfoSchema,
  entries: z.array(LedgerEntrySchema),
  head: z.string(),
})
export type Ledger = z.infer<typeof LedgerSchema>

/** Check a parsed `ledger` object's shape (not its chain: see checkChain), unchanged; LedgerTamperedError when it is malformed. */
export function validateLedger(value: unknown, where: string): Ledger {
  const problem = jsonDataProblem(value)
  if (problem) throw new LedgerTamperedError(`${where} is not a valid effects ledger: it ${problem}`, { ledger: where, reason: 'malformed' })
  const parsed = LedgerSchema.safeParse(value)
  if (parsed.success) return value as Ledger
  const bad = badEntry(parsed.error)
  if (bad === null) throw new LedgerTamperedError(`${where} is not a valid effects ledger`, { ledger: where, reason: 'malformed' })
  throw new LedgerTamperedError(`${where}: entry ${bad} is malformed`, { ledger: where, reason: 'malformed', seq: bad })
}

/** The first malformed entry when the entries are all that is wrong, else null (the ledger itself is). */
function badEntry(error: z.ZodError): number | null {
  let first: number | null = null
  for (const { path } of error.issues) {
    const index = path[0] === 'entries' ? path[1] : undefined
    if (typeof index !== 'number') return null
    first = first === null ? index : Math.min(first, index)
  }
  return first
}

/** The fields of an entry that say what happened, without its place in a chain. */
export function recordOf(entry: LedgerEntry): EffectRecord {
  const { seq: _seq, prev: _prev, ...record } = entry
  return record
}

/** A ledger names each call's `effect-args` and `effect-result`; tools and keys are its users' text. */
export const LEDGER_EDGES: EdgeRule = { only: new Set(['argsHash', 'resultHash']) }
