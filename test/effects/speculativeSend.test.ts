import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type Effects, openEffects } from '../../src/index.js'
import { newStore } from './fixtures.js'

/** A real mail service on 127.0.0.1 that counts the POSTs it receives and echoes their idempotency keys. */
const received: Array<{ key: string | undefined; body: string }> = []
const server = createServer((req, res) => {
  let body = ''
  req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')))
  req.on('end', () => {
    received.push({ key: req.headers['idempotency-key'] as string | undefined, body })
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ id: `msg-${received.length}`, accepted: true }))
  })
})
let url = ''
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/send`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))
beforeEach(() => void received.splice(0))

type Mail = { to: string; subject: string }

/** The agent's tool: a real HTTP POST, keyed so a resend is safe at services that honour the header. */
function mailTool(effects: Effects) {
  return effects.tool(
    'email.send',
    async (mail: Mail) => {
      const response = await fetch(url, { method: 'POST', headers: { 'idempotency-key': `welcome:${mail.to}` }, body: JSON.stringify(mail) })
      return (await response.json()) as { id: string; accepted: boolean }
    },
    { class: 'irreversible', key: (mail) => `welcome:${mail.to}` },
  )
}

const mail: Mail = { to: 'ada@example.com', subject: 'Welcome' }

describe('four speculative candidates all send the same email', () => {
  it('only the committed candidate sends it: exactly one real request, none on replay', async () => {
    const store = await newStore()
    const root = await openEffects({ store, env: {} })
    const candidates = [0, 1, 2, 3].map(() => root.fork())
    const placeholders = await Promise.all(candidates.map((c) => mailTool(c)(mail)))
    expect(placeholders.every((p) => 'deferred' in p && p.deferred)).toBe(true)
    expect(received).toHaveLength(0)

    const [loser0, winner, loser2, loser3] = candidates as [Effects, Effects, Effects, Effects]
    await Promise.all([loser0.drop(), loser2.drop(), loser3.drop()])
    const { executed } = await winner.commit()
    expect(executed).toHaveLength(1)
    expect(received.map((r) => ({ key: r.key, mail: JSON.parse(r.body) as unknown }))).toEqual([{ key: 'welcome:ada@example.com', mail }])

    // the root now holds the result: the agent, a replay from the saved ledger and every loser get it without a request
    expect(await mailTool(root)(mail)).toEqual({ id: 'msg-1', accepted: true })
    const replayed = await openEffects({ store, ledger: await root.ledger(), env: {} })
    expect(await mailTool(replayed)(mail)).toEqual({ id: 'msg-1', accepted: true })
    expect(await mailTool(loser2)(mail)).toEqual({ id: 'msg-1', accepted: true })
    expect(received).toHaveLength(1)
  })

  it('even when all four commit at once, the service receives one request', async () => {
    const root = await openEffects({ store: await newStore(), env: {} })
    const candidates = [0, 1, 2, 3].map(() => root.fork())
    await Promise.all(candidates.map((c) => mailTool(c)(mail)))
    const results = await Promise.all(candidates.map((c) => c.commit()))
    expect(received).toHaveLength(1)
    // every candidate's ledger records the one real send, with the one result
    const resultHashes = new Set(results.flatMap((r) => r.executed.map((e) => e.resultHash)))
    expect(resultHashes.size).toBe(1)
    expect(root.pending()).toEqual([])
  })
})
