/**
 * `forkpoint commit` killed with SIGKILL at every step of sending a branch's deferred emails, and recovered:
 * the kill points and steps of outboxCrashRecover.test.ts and outboxCrashStatus.test.ts (two files, so they run
 * side by side).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'vitest'
import { fpInProcess, fpJsonInProcess } from '../helpers/cli.js'
import { workspaceDeferringSend } from '../helpers/countingServer.js'
import { useHoldingServer } from '../helpers/holdingServer.js'
import { killedAt } from '../helpers/killAtStep.js'

/** The three emails the agent sends from its branch, each its own effect (its own key). */
export const EMAILS = ['ada', 'bob', 'cy'].map((to) => JSON.stringify({ to }))
export const AGENT = 'mail-agent/1.0'

/** Where `forkpoint commit` is killed: paused at a named durable step (its N-th time), or while the service holds the N-th request. */
type KillPoint = { step: string } | { inFlight: number }

const PER_EMAIL = ['send:intent', 'send:intent-saved', 'in flight', 'send:answered', 'send:executed-saved']
export const KILL_POINTS: KillPoint[] = [
  ...['commit:start', 'commit:verified', 'handover:locked', 'handover:marked', 'handover:saved', 'handover:done', 'commit:applied', 'send:locked'].map((step) => ({ step })),
  ...EMAILS.flatMap((_, i) => PER_EMAIL.map((step) => (step === 'in flight' ? { inFlight: i + 1 } : { step: `${step}#${i + 1}` }))),
  { step: 'send:done' },
]

export const nameOf = (point: KillPoint) => ('step' in point ? point.step : `request ${point.inFlight} in flight`)

type Service = ReturnType<typeof useHoldingServer>

/** A workspace with branch `mail` whose agent wrote a file and deferred the three emails. */
export async function branchWithOutbox(service: Service): Promise<string> {
  const dir = await workspaceDeferringSend()
  expect((await fpInProcess(dir, 'branch', 'mail')).code).toBe(0)
  const curl = (body: string) => `curl -s -o /dev/null -A '${AGENT}' -X POST -H 'content-type: application/json' -d '${body}' ${service.url('/send')}`
  const run = await fpInProcess(dir, 'run', '--branch', 'mail', '--net', 'host', '--', 'sh', '-c', ['echo sent > report.txt', ...EMAILS.map(curl)].join(' && '))
  expect(run.code).toBe(0)
  expect(service.received).toEqual([])
  return dir
}

/** `forkpoint commit mail`, killed with SIGKILL at `point`. */
export async function commitKilledAt(dir: string, service: Service, point: KillPoint): Promise<void> {
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
export async function recoverAfterCrash(dir: string, via: 'recover' | 'status'): Promise<void> {
  expect((await fpInProcess(dir, ...(via === 'recover' ? ['effects', 'recover'] : ['status']))).code).toBe(0)
  const live = (await fpJsonInProcess<{ branches: Array<{ name: string }> }>(dir, 'branch')).json.branches.map((b) => b.name)
  if (live.includes('mail')) expect((await fpInProcess(dir, 'commit', 'mail')).code).toBe(0)
  expect(readFileSync(join(dir, 'report.txt'), 'utf8')).toBe('sent\n')
  expect((await fpJsonInProcess<{ entries: unknown[] }>(dir, 'effects', '--pending')).json.entries).toEqual([])
}

export async function uncertainBodies(dir: string, service: Service): Promise<string[]> {
  const listed = await fpJsonInProcess<{ entries: Array<{ idempotencyKey: string }> }>(dir, 'effects', '--uncertain')
  const keys = new Set(listed.json.entries.map((e) => e.idempotencyKey))
  return [...new Set(service.received.filter((r) => keys.has(r.idempotencyKey!)).map((r) => r.body))].sort()
}
