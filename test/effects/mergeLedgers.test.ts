import { describe, expect, it } from 'vitest'
import { EffectKeyConflictError, LedgerTamperedError, type Store, mergeLedgers, openEffects, verifyLedger } from '../../src/index.js'
import type { Ledger } from '../../src/objects/Ledger.js'
import { KEY, counted, newStore, tickingClock } from './fixtures.js'

type Mail = { to: string }
const byRecipient = (m: Mail) => `mail:${m.to}`

/** A base ledger with one sent mail, and two direct children of it that each send another, on interleaved clocks. */
async function divergedLedgers(store: Store, env: NodeJS.ProcessEnv) {
  const base = await openEffects({ store, env, now: tickingClock('2026-01-01T00:00:00.000Z') })
  const mail = counted<Mail>('sent')
  await base.tool('email.send', mail.fn, { class: 'irreversible', key: byRecipient })({ to: 'base@x' })
  const baseDigest = await base.ledger()
  const side = async (start: string, to: string[]) => {
    const handle = await openEffects({ store, env, ledger: baseDigest, now: tickingClock(start) })
    const send = handle.tool('email.send', mail.fn, { class: 'irreversible', key: byRecipient })
    for (const recipient of to) await send({ to: recipient })
    return handle.ledger()
  }
  const ours = await side('2026-01-02T00:00:00.000Z', ['ours-1@x', 'ours-2@x'])
  const theirs = await side('2026-01-02T00:00:00.500Z', ['theirs-1@x'])
  return { ours, theirs, mail }
}

describe('mergeLedgers (the effects layer of an image merge)', () => {
  it('is the union by idempotency key, the common history once, re-chained in time order', async () => {
    const store = await newStore()
    const { ours, theirs } = await divergedLedgers(store, {})
    const { digest, ledger } = await mergeLedgers({ store, ours, theirs, env: {} })
    expect(ledger.entries.map((e) => [e.seq, e.idempotencyKey])).toEqual([
      [0, 'mail:base@x'],
      [1, 'mail:ours-1@x'],
      [2, 'mail:theirs-1@x'],
      [3, 'mail:ours-2@x'],
    ])
    await verifyLedger({ store, ledger: digest, env: {} })
    // merging again, or the other way round, changes nothing
    expect((await mergeLedgers({ store, ours: digest, theirs, env: {} })).digest).toBe(digest)
    expect((await mergeLedgers({ store, ours: theirs, theirs: ours, env: {} })).digest).toBe(digest)
  })

  it('a merged ledger returns every recorded result: no key runs again after the merge', async () => {
    const store = await newStore()
    const { ours, theirs, mail } = await divergedLedgers(store, {})
    const merged = await openEffects({ store, ledger: (await mergeLedgers({ store, ours, theirs, env: {} })).digest, env: {} })
    const send = merged.tool('email.send', mail.fn, { class: 'irreversible', key: byRecipient })
    for (const to of ['base@x', 'ours-1@x', 'ours-2@x', 'theirs-1@x']) await send({ to })
    expect(mail.calls()).toBe(4)
  })

  it('keeps the HMAC chain when FORKPOINT_KEY is set', async () => {
    const store = await newStore()
    const env = { FORKPOINT_KEY: KEY }
    const { ours, theirs } = await divergedLedgers(store, env)
    const { digest, ledger } = await mergeLedgers({ store, ours, theirs, env })
    expect(ledger.chain.alg).toBe('hmac-sha256')
    await verifyLedger({ store, ledger: digest, env })
  })

  it('one key executed with two different results is a conflict (exit 3)', async () => {
    const store = await newStore()
    const run = async (result: string) => {
      const handle = await openEffects({ store, env: {} })
      await handle.tool('payment.charge', async () => result, { class: 'irreversible', key: () => 'order-42' })({ amount: 10 })
      return handle.ledger()
    }
    const err = await mergeLedgers({ store, ours: await run('receipt-A'), theirs: await run('receipt-B'), env: {} }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(EffectKeyConflictError)
    expect((err as EffectKeyConflictError).exitCode).toBe(3)
    expect((err as EffectKeyConflictError).data).toMatchObject({ idempotencyKey: 'order-42', reason: 'result' })
  })

  it('a deferred key on one side and executed on the other is executed, not pending', async () => {
    const store = await newStore()
    const mail = counted<Mail>('sent')
    const executed = await openEffects({ store, env: {} })
    await executed.tool('email.send', mail.fn, { class: 'irreversible', key: byRecipient })({ to: 'a@x' })
    const deferred = await openEffects({ store, mode: 'speculative', env: {} })
    await deferred.tool('email.send', mail.fn, { class: 'irreversible', key: byRecipient })({ to: 'a@x' })
    const { digest } = await mergeLedgers({ store, ours: await deferred.ledger(), theirs: await executed.ledger(), env: {} })
    const merged = await openEffects({ store, ledger: digest, mode: 'speculative', env: {} })
    expect(merged.pending()).toEqual([])
  })

  it('refuses a tampered input with exit 5 and writes no merge', async () => {
    const store = await newStore()
    const { ours, theirs } = await divergedLedgers(store, {})
    const bad = structuredClone(await store.readObject<Ledger>(theirs, 'ledger'))
    bad.entries[0]!.idempotencyKey = 'mail:someone-else@x'
    const err = await mergeLedgers({ store, ours, theirs: await store.writeObject(bad), env: {} }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(LedgerTamperedError)
    expect((err as LedgerTamperedError).exitCode).toBe(5)
  })
})
