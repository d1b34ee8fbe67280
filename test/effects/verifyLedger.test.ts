import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { ChainHasher } from '../../src/effects/ChainHasher.js'
import { chainRecords } from '../../src/effects/chain.js'
import type { Ledger } from '../../src/objects/Ledger.js'
import { recordOf } from '../../src/objects/Ledger.js'
import { EncryptionKeyError, LedgerTamperedError, type Store, openEffects, verifyLedger } from '../../src/index.js'
import { canonicalBytes } from '../../src/util/canonicalJson.js'
import { walkGraph } from '../../src/store/objectGraph.js'
import type { Digest } from '../../src/objects/digest.js'
import { KEY, OTHER_KEY, counted, newStore, tickingClock } from './fixtures.js'

/** A ledger of four entries made through the public API: a read, an idempotent call, an irreversible one deferred, then committed. */
async function recordedLedger(store: Store, env: NodeJS.ProcessEnv = {}): Promise<Digest> {
  const effects = await openEffects({ store, env, mode: 'speculative', now: tickingClock() })
  await effects.tool('weather.get', counted<{ city: string }>('weather').fn, { class: 'read' })({ city: 'Oslo' })
  await effects.tool('file.put', counted<{ path: string }>('put').fn, { class: 'idempotent' })({ path: '/a' })
  await effects.tool('email.send', counted<{ to: string }>('send').fn, { class: 'irreversible', key: (a) => `mail:${a.to}` })({ to: 'x@example.com' })
  await effects.commit()
  return effects.ledger()
}

/** Store a copy of the ledger at `digest` changed by `edit`, as a hostile writer would. */
async function rewritten(store: Store, digest: Digest, edit: (ledger: Ledger) => void): Promise<Digest> {
  const ledger = structuredClone(await store.readObject<Ledger>(digest, 'ledger'))
  edit(ledger)
  return store.writeObject(ledger)
}

/** Re-chain (with a key or none) the edited records, as a forger who controls the whole object would. */
function forged(ledger: Ledger, env: NodeJS.ProcessEnv): Ledger {
  return chainRecords(ledger.entries.map(recordOf), ChainHasher.fromEnv(env))
}

async function refusal(promise: Promise<unknown>): Promise<LedgerTamperedError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(LedgerTamperedError)
  expect((err as LedgerTamperedError).exitCode).toBe(5)
  return err as LedgerTamperedError
}

const sha256Hex = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

describe('ledger chain', () => {
  it("links each entry to the SHA-256 of the previous entry's canonical bytes, and verifies", async () => {
    const store = await newStore()
    const digest = await recordedLedger(store)
    const ledger = await verifyLedger({ store, ledger: digest, env: {} })
    expect(ledger.chain).toEqual({ alg: 'sha256' })
    expect(ledger.entries.map((e) => [e.seq, e.tool, e.class, e.status])).toEqual([
      [0, 'weather.get', 'read', 'executed'],
      [1, 'file.put', 'idempotent', 'executed'],
      [2, 'email.send', 'irreversible', 'deferred'],
      [3, 'email.send', 'irreversible', 'executed'],
    ])
    expect(ledger.entries[0]!.prev).toBe('0'.repeat(64))
    for (let i = 1; i < ledger.entries.length; i++) expect(ledger.entries[i]!.prev).toBe(sha256Hex(canonicalBytes(ledger.entries[i - 1])))
  })

  it('with FORKPOINT_KEY, chains with HMAC-SHA256 that only that key verifies', async () => {
    const store = await newStore()
    const env = { FORKPOINT_KEY: KEY }
    const digest = await recordedLedger(store, env)
    const ledger = await verifyLedger({ store, ledger: digest, env })
    expect(ledger.chain.alg).toBe('hmac-sha256')
    expect(ledger.entries[1]!.prev).not.toBe(sha256Hex(canonicalBytes(ledger.entries[0])))
    // the same key given as a passphrase-free 64-hex value, read as the trace layer reads it
    await expect(verifyLedger({ store, ledger: digest, env: { FORKPOINT_KEY: KEY.toUpperCase() } })).resolves.toBeTruthy()
    expect((await refusal(verifyLedger({ store, ledger: digest, env: { FORKPOINT_KEY: OTHER_KEY } }))).data['reason']).toBe('key')
    await expect(verifyLedger({ store, ledger: digest, env: {} })).rejects.toBeInstanceOf(EncryptionKeyError)
  })
})

describe('a tampered ledger is refused with exit 5', () => {
  const cases: Array<[string, (l: Ledger) => void, string]> = [
    ['an edited entry', (l) => void (l.entries[1]!.idempotencyKey = 'other'), 'chain'],
    ['an edited last entry', (l) => void (l.entries[3]!.resultHash = l.entries[1]!.resultHash), 'head'],
    ['a removed entry', (l) => void l.entries.splice(1, 1), 'seq'],
    ['a removed entry, renumbered', (l) => void (l.entries = l.entries.filter((_, i) => i !== 1).map((e, seq) => ({ ...e, seq }))), 'chain'],
    ['a reordered entry', (l) => void l.entries.splice(1, 2, l.entries[2]!, l.entries[1]!), 'seq'],
    ['a broken chain', (l) => void (l.entries[2]!.prev = 'f'.repeat(64)), 'chain'],
    ['a removed last entry', (l) => void l.entries.pop(), 'head'],
    ['a malformed entry', (l) => void ((l.entries[0] as { class: string }).class = 'harmless'), 'malformed'],
    ['no entries list', (l) => void ((l as { entries: unknown }).entries = {}), 'malformed'],
  ]
  for (const [name, edit, reason] of cases) {
    it(`${name} (${reason})`, async () => {
      const store = await newStore()
      const tampered = await rewritten(store, await recordedLedger(store), edit)
      expect((await refusal(verifyLedger({ store, ledger: tampered, env: {} }))).data['reason']).toBe(reason)
      await refusal(openEffects({ store, ledger: tampered, env: {} }))
    })
  }

  it('a keyed ledger forged without the key: edited and re-chained, HMAC stripped, or truncated', async () => {
    const store = await newStore()
    const env = { FORKPOINT_KEY: KEY }
    const digest = await recordedLedger(store, env)
    const rechainedWithOtherKey = await rewritten(store, digest, (l) => {
      l.entries[1]!.idempotencyKey = 'other'
      Object.assign(l, { ...forged(l, { FORKPOINT_KEY: OTHER_KEY }), chain: l.chain })
    })
    expect((await refusal(verifyLedger({ store, ledger: rechainedWithOtherKey, env }))).data['reason']).toBe('chain')
    const stripped = await rewritten(store, digest, (l) => Object.assign(l, forged(l, {})))
    expect((await refusal(verifyLedger({ store, ledger: stripped, env }))).data['reason']).toBe('unkeyed')
    const truncated = await rewritten(store, digest, (l) => {
      l.entries.pop()
      l.head = l.entries.at(-1)!.prev // the best a forger without the key can put there
    })
    expect((await refusal(verifyLedger({ store, ledger: truncated, env }))).data['reason']).toBe('head')
  })
})

describe('hostile input', () => {
  it('an entry naming an object of the wrong kind, or a missing one, is refused with exit 5', async () => {
    const store = await newStore()
    const digest = await recordedLedger(store)
    const original = await store.readObject<Ledger>(digest, 'ledger')
    const snapshotLike = await store.writeObject({ kind: 'tree', schemaVersion: 1, entries: [] })
    for (const [field, target] of [
      ['resultHash', original.entries[1]!.argsHash], // an effect-args where an effect-result belongs
      ['argsHash', snapshotLike],
      ['argsHash', `sha256:${'0'.repeat(64)}`], // absent from the store
    ] as const) {
      const hostile = await rewritten(store, digest, (l) => {
        ;(l.entries[1] as unknown as Record<string, string>)[field] = target
        Object.assign(l, forged(l, {})) // a valid chain: only the reference is wrong
      })
      const err = await refusal(verifyLedger({ store, ledger: hostile, env: {} }))
      expect(err.data['reason'], `${field} -> ${target}`).toBe('reference')
    }
  })

  it('a ledger digest naming an object of another kind, or one key executed with two results, is refused with exit 5', async () => {
    const store = await newStore()
    const notALedger = await store.writeObject({ kind: 'effect-result', schemaVersion: 1, value: 'null' })
    expect((await refusal(verifyLedger({ store, ledger: notALedger, env: {} }))).data['reason']).toBe('malformed')
    const digest = await recordedLedger(store)
    const twoResults = await rewritten(store, digest, (l) => {
      l.entries.push({ ...l.entries[3]!, resultHash: l.entries[1]!.resultHash })
      Object.assign(l, forged(l, {}))
    })
    expect((await refusal(verifyLedger({ store, ledger: twoResults, env: {} }))).data['reason']).toBe('conflict')
  })
})

describe('in the object graph', () => {
  it("a ledger keeps its args and results reachable; digests inside an agent's data are not references", async () => {
    const store = await newStore()
    const effects = await openEffects({ store, env: {} })
    const look = effects.tool('registry.lookup', async (a: { image: string }) => ({ found: a.image }), { class: 'read' })
    await look({ image: `sha256:${'e'.repeat(64)}` }) // an agent's own data that happens to look like a digest
    const digest = await effects.ledger()
    const [entry] = (await verifyLedger({ store, ledger: digest, env: {} })).entries
    const { reachable, missing } = await walkGraph(store, [digest])
    expect([...reachable.keys()].sort()).toEqual([digest, entry!.argsHash, entry!.resultHash].sort())
    expect(missing.size).toBe(0)
  })
})
