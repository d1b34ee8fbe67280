import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { fp, fpJson } from '../helpers/cli.js'
import { workspaceDeferringSend } from '../helpers/countingServer.js'
import { useHoldingServer } from '../helpers/holdingServer.js'
import { killedAt } from '../helpers/killAtStep.js'

/** The three emails the agent sends from its branch, each its own effect (its own key). */
const EMAILS = ['ada', 'bob', 'cy'].map((to) => JSON.stringify({ to }))
const AGENT = 'mail-agent/1.0'

/** Where `forkpoint commit` is killed: paused at a named durable step (its N-th time), or while the service holds the N-th request. */
type KillPoint = { step: string } | { inFlight: number }

const PER_EMAIL = ['send:intent', 'send:intent-saved', 'in flight', 'send:answered', 'send:executed-saved']
const KILL_POINTS: KillPoint[] = [
  ...['commit:start', 'commit:verified', 'handover:locked', 'handover:marked', 'handover:saved', 'handover:done', 'commit:applied', 'send:locked'].map((step) => ({ step })),
  ...EMAILS.flatMap((_, i) => PER_EMAIL.map((step) => (step === 'in flight' ? { inFlight: i + 1 } : { step: `${step}#${i + 1}` }))),
  { step: 'send:done' },
]

const nameOf = (point: KillPoint) => ('step' in point ? point.step : `request ${point.inFlight} in flight`)

type Service = ReturnType<typeof useHoldingServer>

/** A workspace with branch `mail` whose agent wrote a file and deferred the three emails. */
async function branchWithOutbox(service: Service): Promise<string> {
  const dir = await workspaceDeferringSend()
  expect((await fp(dir, 'branch', 'mail')).code).toBe(0)
  const curl = (body: string) => `curl -s -o /dev/null -A '${AGENT}' -X POST -H 'content-type: application/json' -d '${body}' ${service.url('/send')}`
  const run = await fp(dir, 'run', '--branch', 'mail', '--net', 'host', '--', 'sh', '-c', ['echo sent > report.txt', ...EMAILS.map(curl)].join(' && '))
  expect(run.code).toBe(0)
  expect(service.received).toEqual([])
  return dir
}

/** `forkpoint commit mail`, killed with SIGKILL at `point`. */
async function commitKilledAt(dir: string, service: Service, point: KillPoint): Promise<void> {
  if ('inFlight' in point) service.state.holdNth = point.inFlight
  try {
    await killedAt(dir, ['commit', 'mail'], 'step' in point ? point : { what: nameOf(point), reached: () => service.received.length >= point.inFlight })
  } finally {
    service.release()
  }
}

/**
 * What a user does after the crash: `forkpoint effects recover`, or only what comes next
 * (`status`, which recovers by itself); the branch committed again if it is still live.
 */
async function recoverAfterCrash(dir: string, via: 'recover' | 'status'): Promise<void> {
  expect((await fp(dir, ...(via === 'recover' ? ['effects', 'recover'] : ['status']))).code).toBe(0)
  const live = (await fpJson<{ branches: Array<{ name: string }> }>(dir, 'branch')).json.branches.map((b) => b.name)
  if (live.includes('mail')) expect((await fp(dir, 'commit', 'mail')).code).toBe(0)
  expect(readFileSync(join(dir, 'report.txt'), 'utf8')).toBe('sent\n')
  expect((await fpJson<{ entries: unknown[] }>(dir, 'effects', '--pending')).json.entries).toEqual([])
}

async function uncertainBodies(dir: string, service: Service): Promise<string[]> {
  const listed = await fpJson<{ entries: Array<{ idempotencyKey: string }> }>(dir, 'effects', '--uncertain')
  const keys = new Set(listed.json.entries.map((e) => e.idempotencyKey))
  return [...new Set(service.received.filter((r) => keys.has(r.idempotencyKey!)).map((r) => r.body))].sort()
}

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

describe('forkpoint commit killed with SIGKILL at every step, against a service that ignores Idempotency-Key (recovered by the next status)', () => {
  const service = useHoldingServer(false)

  it.each(KILL_POINTS.map((point) => [nameOf(point), point] as const))(
    'killed at %s: every email is applied once or twice, and those applied twice are listed by effects --uncertain',
    async (_name, point) => {
      service.reset()
      const dir = await branchWithOutbox(service)
      await commitKilledAt(dir, service, point)
      await recoverAfterCrash(dir, 'status')
      expect([...service.applied.keys()].sort()).toEqual([...EMAILS].sort())
      const twice = [...service.applied].filter(([, n]) => n === 2).map(([body]) => body)
      expect([...service.applied.values()].every((n) => n === 1 || n === 2)).toBe(true)
      const uncertain = await uncertainBodies(dir, service)
      expect(uncertain).toEqual(expect.arrayContaining(twice))
      // listed: only an email whose first attempt had no recorded answer (at most the one the kill interrupted)
      expect(uncertain.length).toBeLessThanOrEqual(1)
      // the service had the request, its answer was never recorded: sent again
      const answeredUnrecorded = 'inFlight' in point ? point.inFlight : /^send:answered#(\d)$/.exec(point.step)?.[1]
      if (answeredUnrecorded) expect([twice, uncertain]).toEqual([[EMAILS[Number(answeredUnrecorded) - 1]], [EMAILS[Number(answeredUnrecorded) - 1]]])
      else expect(twice).toEqual([])
    },
  )
})
