import { describe, expect, it } from 'vitest'
import { EffectKeyConflictError, EffectToolMissingError, UsageError, isDeferredEffect, openEffects, verifyLedger } from '../../src/index.js'
import { counted, newStore, tickingClock } from './fixtures.js'

type Mail = { to: string; body: string }
const byRecipient = (m: Mail) => `mail:${m.to}`

describe('read and idempotent tools', () => {
  it('run and are recorded executed; a read runs on every call, an idempotent key only once', async () => {
    const store = await newStore()
    const effects = await openEffects({ store, mode: 'speculative', env: {} })
    const read = counted<{ city: string }>('weather')
    const put = counted<{ path: string }>('put')
    const get = effects.tool('weather.get', read.fn, { class: 'read' })
    const write = effects.tool('file.put', put.fn, { class: 'idempotent' })
    expect(await get({ city: 'Oslo' })).toEqual({ label: 'weather', n: 1, args: { city: 'Oslo' } })
    expect(await get({ city: 'Oslo' })).toEqual({ label: 'weather', n: 2, args: { city: 'Oslo' } })
    expect(await write({ path: '/a' })).toEqual({ label: 'put', n: 1, args: { path: '/a' } })
    expect(await write({ path: '/a' })).toEqual({ label: 'put', n: 1, args: { path: '/a' } })
    expect([read.calls(), put.calls()]).toEqual([2, 1])
    expect(effects.entries().map((e) => [e.tool, e.status])).toEqual([
      ['weather.get', 'executed'],
      ['weather.get', 'executed'],
      ['file.put', 'executed'],
    ])
    expect(effects.pending()).toEqual([])
  })
})

describe('irreversible tools', () => {
  it('outside a speculative context run at once, once per key', async () => {
    const effects = await openEffects({ store: await newStore(), env: {} })
    const mail = counted<Mail>('sent')
    const send = effects.tool('email.send', mail.fn, { class: 'irreversible', key: byRecipient })
    expect(await send({ to: 'a@x', body: 'hi' })).toEqual({ label: 'sent', n: 1, args: { to: 'a@x', body: 'hi' } })
    expect(await send({ to: 'a@x', body: 'hi' })).toEqual({ label: 'sent', n: 1, args: { to: 'a@x', body: 'hi' } })
    expect(mail.calls()).toBe(1)
  })

  it('in a speculative context are deferred with a placeholder, and run exactly once when it commits', async () => {
    const effects = await openEffects({ store: await newStore(), mode: 'speculative', env: {} })
    const mail = counted<Mail>('sent')
    const send = effects.tool('email.send', mail.fn, { class: 'irreversible', key: byRecipient })
    const first = await send({ to: 'a@x', body: 'hi' })
    expect(first).toEqual({ deferred: true, tool: 'email.send', idempotencyKey: 'mail:a@x', seq: 0 })
    expect(isDeferredEffect(first)).toBe(true)
    expect(await send({ to: 'a@x', body: 'hi' })).toEqual(first) // still waiting: the same placeholder, no new entry
    expect(mail.calls()).toBe(0)
    expect(effects.pending().map((e) => [e.idempotencyKey, e.status])).toEqual([['mail:a@x', 'deferred']])

    const { executed } = await effects.commit()
    expect(mail.calls()).toBe(1)
    expect(executed.map((e) => [e.seq, e.status])).toEqual([[1, 'executed']])
    expect(effects.pending()).toEqual([])
    expect(await send({ to: 'a@x', body: 'hi' })).toEqual({ label: 'sent', n: 1, args: { to: 'a@x', body: 'hi' } })
    await effects.commit()
    expect(mail.calls()).toBe(1)
    await verifyLedger({ store: effects.store, ledger: await effects.ledger(), env: {} })
  })

  it('are dropped when the context aborts, and never run', async () => {
    const effects = await openEffects({ store: await newStore(), mode: 'speculative', env: {} })
    const mail = counted<Mail>('sent')
    const send = effects.tool('email.send', mail.fn, { class: 'irreversible', key: byRecipient })
    await send({ to: 'a@x', body: 'hi' })
    const dropped = await effects.drop()
    expect(dropped.map((e) => [e.idempotencyKey, e.status, e.resultHash])).toEqual([['mail:a@x', 'dropped', null]])
    expect(effects.pending()).toEqual([])
    expect((await effects.commit()).executed).toEqual([])
    expect(mail.calls()).toBe(0)
  })

  it('a failure while committing leaves the effect pending for the next commit', async () => {
    const effects = await openEffects({ store: await newStore(), mode: 'speculative', env: {} })
    let failures = 1
    const send = effects.tool(
      'email.send',
      async (m: Mail) => {
        if (failures-- > 0) throw new Error('smtp down')
        return `sent ${m.to}`
      },
      { class: 'irreversible', key: byRecipient },
    )
    await send({ to: 'a@x', body: 'hi' })
    await expect(effects.commit()).rejects.toThrow('smtp down')
    expect(effects.pending()).toHaveLength(1)
    expect((await effects.commit()).executed).toHaveLength(1)
    expect(await send({ to: 'a@x', body: 'hi' })).toBe('sent a@x')
  })
})

describe('idempotency keys', () => {
  it('one key with different arguments is a conflict (exit 3), deferred or executed', async () => {
    for (const mode of ['direct', 'speculative'] as const) {
      const effects = await openEffects({ store: await newStore(), mode, env: {} })
      const send = effects.tool('email.send', counted<Mail>('sent').fn, { class: 'irreversible', key: byRecipient })
      await send({ to: 'a@x', body: 'hi' })
      const err = await send({ to: 'a@x', body: 'other text' }).catch((e: unknown) => e)
      expect(err, mode).toBeInstanceOf(EffectKeyConflictError)
      expect((err as EffectKeyConflictError).exitCode).toBe(3)
      expect((err as EffectKeyConflictError).data).toMatchObject({ idempotencyKey: 'mail:a@x', reason: 'args' })
    }
  })

  it('a key executed once is never executed again by a replayed handle or a fork', async () => {
    const store = await newStore()
    const first = await openEffects({ store, env: {} })
    const original = counted<Mail>('sent')
    await first.tool('email.send', original.fn, { class: 'irreversible', key: byRecipient })({ to: 'a@x', body: 'hi' })
    const saved = await first.ledger()

    const replayed = await openEffects({ store, ledger: saved, env: {} })
    const again = counted<Mail>('again')
    expect(await replayed.tool('email.send', again.fn, { class: 'irreversible', key: byRecipient })({ to: 'a@x', body: 'hi' })).toEqual({
      label: 'sent',
      n: 1,
      args: { to: 'a@x', body: 'hi' },
    })
    for (const mode of ['direct', 'speculative'] as const) {
      const child = first.fork({ mode })
      expect(await child.tool('email.send', again.fn, { class: 'irreversible', key: byRecipient })({ to: 'a@x', body: 'hi' })).toMatchObject({ label: 'sent', n: 1 })
    }
    expect([original.calls(), again.calls()]).toEqual([1, 0])
  })

  it('the default key is the tool and its arguments: equal calls are one effect', async () => {
    const effects = await openEffects({ store: await newStore(), env: {} })
    const put = counted<{ path: string }>('put')
    const write = effects.tool('file.put', put.fn, { class: 'idempotent' })
    await write({ path: '/a' })
    await write({ path: '/a' })
    await write({ path: '/b' })
    expect(put.calls()).toBe(2)
    expect(effects.entries()[0]!.idempotencyKey).toMatch(/^file\.put:[0-9a-f]{64}$/)
  })
})

describe('the outbox across handles', () => {
  it('a ledger reopened elsewhere keeps its outbox: commit needs the tool registered, then runs it once', async () => {
    const store = await newStore()
    const branch = await openEffects({ store, mode: 'speculative', env: {} })
    await branch.tool('email.send', counted<Mail>('unused').fn, { class: 'irreversible', key: byRecipient })({ to: 'a@x', body: 'hi' })
    const reopened = await openEffects({ store, ledger: await branch.ledger(), mode: 'speculative', env: {} })
    expect(reopened.pending()).toHaveLength(1)
    const err = await reopened.commit().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(EffectToolMissingError)
    expect((err as EffectToolMissingError).exitCode).toBe(2)
    const mail = counted<Mail>('sent')
    reopened.tool('email.send', mail.fn, { class: 'irreversible', key: byRecipient })
    await reopened.commit()
    expect(mail.calls()).toBe(1)
  })

  it('each wrapper calls the function it wrapped, though forks share one registry for commit', async () => {
    const root = await openEffects({ store: await newStore(), env: {} })
    const [a, b] = [root.fork({ mode: 'direct' }), root.fork({ mode: 'direct' })]
    const sendA = a.tool('email.send', async (m: Mail) => `A ${m.to}`, { class: 'irreversible', key: byRecipient })
    const sendB = b.tool('email.send', async (m: Mail) => `B ${m.to}`, { class: 'irreversible', key: byRecipient })
    expect([await sendA({ to: 'a@x', body: '' }), await sendB({ to: 'b@x', body: '' })]).toEqual(['A a@x', 'B b@x'])
  })

  it('a nested speculative commit hands its outbox up; only the outermost commit into a direct context runs it', async () => {
    const root = await openEffects({ store: await newStore(), env: {}, now: tickingClock() })
    const mail = counted<Mail>('sent')
    const send = root.tool('email.send', mail.fn, { class: 'irreversible', key: byRecipient })
    const child = root.fork()
    const grandchild = child.fork()
    // the tool registered once is known to the whole family; each handle wraps it for its own calls
    expect(await grandchild.tool('email.send', mail.fn, { class: 'irreversible', key: byRecipient })({ to: 'a@x', body: 'hi' })).toMatchObject({ deferred: true })
    expect(await grandchild.commit()).toMatchObject({ executed: [], handedUp: [{ idempotencyKey: 'mail:a@x' }] })
    expect(mail.calls()).toBe(0)
    expect(child.pending()).toHaveLength(1)
    expect((await child.commit()).executed).toHaveLength(1)
    expect(mail.calls()).toBe(1)
    expect(root.pending()).toEqual([])
    expect(await send({ to: 'a@x', body: 'hi' })).toMatchObject({ label: 'sent', n: 1 })
    expect(mail.calls()).toBe(1)
  })
})

describe('arguments and results', () => {
  it('arguments that are not JSON are a usage error (exit 2): the tool is not called, nothing is recorded', async () => {
    const effects = await openEffects({ store: await newStore(), env: {} })
    const put = counted<{ size: bigint }>('put')
    const err = await effects
      .tool('file.put', put.fn, { class: 'idempotent' })({ size: 1n })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect((err as UsageError).exitCode).toBe(2)
    expect([put.calls(), effects.entries().length]).toEqual([0, 0])
  })

  it('results come back as JSON, the same on the first call as on a recorded one', async () => {
    const effects = await openEffects({ store: await newStore(), env: {} })
    const stamp = effects.tool('clock.stamp', async () => ({ when: new Date('2026-01-01T00:00:00.000Z'), gone: undefined }), { class: 'idempotent' })
    const first = await stamp({})
    expect(first).toEqual({ when: '2026-01-01T00:00:00.000Z' })
    expect(await stamp({})).toEqual(first)
    expect(await effects.tool('log.write', async () => undefined, { class: 'idempotent' })({})).toBeNull()
  })
})
