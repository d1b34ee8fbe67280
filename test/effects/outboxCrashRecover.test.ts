import { describe, expect, it } from 'vitest'
import { useHoldingServer } from '../helpers/holdingServer.js'
import { EMAILS, AGENT, KILL_POINTS, branchWithOutbox, commitKilledAt, nameOf, recoverAfterCrash } from './outboxCrash.js'

describe('forkpoint commit killed with SIGKILL at every step, against a service that honours Idempotency-Key (recovered by effects recover)', () => {
  const service = useHoldingServer(true)
  it('has at least 20 kill points', () => expect(KILL_POINTS.length).toBeGreaterThanOrEqual(20))

  it.each(KILL_POINTS.map((point) => [nameOf(point), point] as const))('killed at %s: after recovery every email is applied exactly once', async (_name, point) => {
    service.reset()
    const dir = await branchWithOutbox(service)
    await commitKilledAt(dir, service, point)
    await recoverAfterCrash(dir, 'recover')
    expect(Object.fromEntries(service.applied)).toEqual(Object.fromEntries(EMAILS.map((e) => [e, 1])))
    // every request, a resend too, carries the effect's one key and the agent's own User-Agent
    const keysByBody = new Map(service.received.map((r) => [r.body, new Set<string | undefined>()]))
    for (const r of service.received) keysByBody.get(r.body)!.add(r.idempotencyKey)
    expect([...keysByBody.values()].map((keys) => keys.size)).toEqual([1, 1, 1])
    expect(new Set(service.received.map((r) => r.userAgent))).toEqual(new Set([AGENT]))
  })
})
