import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { bootMachine, forkMachine, killMachine, snapshotMachine } from '../../src/index.js'
import { MACHINE_TIMEOUT, execOrHang, killAllMachines, machineWorkspace, pollFor } from '../helpers/machines.js'
import { sharedMachineImage } from '../helpers/sharedMachineImages.js'

/**
 * The guest agent (src/machine/image/guestScripts.ts, src/machine/qemu/GuestAgent.ts) must
 * answer every exec: one after another, from several callers at once, and after a command
 * that left a background process behind. A machine of its own for each test (one QEMU at a
 * time): an agent one test wedges must not fail the others. Each is a child forked from a
 * snapshot of one machine booted once, its agent idle: a fork starts in a fraction of a boot.
 */
let dir: string
let snapshot: string
let machine: string

beforeAll(async () => {
  dir = await machineWorkspace('machine-agent')
  const booted = await bootMachine({ dir, image: await sharedMachineImage(dir, 'busybox') })
  snapshot = (await snapshotMachine({ dir, machine: booted.id })).image
  await killMachine({ dir, machine: booted.id })
}, MACHINE_TIMEOUT)

beforeEach(async () => {
  const [child] = await forkMachine({ dir, image: snapshot, n: 1 })
  machine = child!.id
}, MACHINE_TIMEOUT)

afterEach(async () => {
  await killMachine({ dir, machine })
}, MACHINE_TIMEOUT)

afterAll(async () => {
  if (dir) await killAllMachines(dir)
}, MACHINE_TIMEOUT)

const run = (command: string) => execOrHang({ dir, machine, command })

describe('the guest agent', { timeout: MACHINE_TIMEOUT }, () => {
  it('answers every one of many execs in a row, before and after a snapshot of the running machine', async () => {
    for (let i = 0; i < 20; i++) expect(await run(`echo ${i}`)).toEqual({ exitCode: 0, stdout: `${i}\n`, stderr: '' })
    await snapshotMachine({ dir, machine })
    for (let i = 0; i < 60; i++) expect(await run(`echo after ${i}`)).toEqual({ exitCode: 0, stdout: `after ${i}\n`, stderr: '' })
  })

  it('answers four callers at once, each its own answer', async () => {
    const answers = await Promise.allSettled([0, 1, 2, 3].map((i) => run(`echo caller ${i}`))) // every caller settles before the next test
    expect(answers.map((a) => (a.status === 'fulfilled' ? a.value.stdout : String(a.reason)))).toEqual([0, 1, 2, 3].map((i) => `caller ${i}\n`))
  })

  it('passes binary-unsafe output and a long script through intact', async () => {
    const long = Array.from({ length: 2000 }, (_, i) => `echo line${i}`).join('\n')
    const r = await run(long)
    expect(r.stdout.split('\n').length).toBe(2001)
    expect(r.stdout.endsWith('line1999\n')).toBe(true)
    expect((await run("printf 'caf\\303\\251 \\n\\ttab'")).stdout).toBe('café \n\ttab')
  })

  it('keeps answering after a command leaves a daemon behind with the usual redirections (setsid … </dev/null >/dev/null 2>&1 &)', async () => {
    await run("setsid sh -c 'while :; do date > /tmp/tick; sleep 1; done' </dev/null >/dev/null 2>&1 &")
    expect(await pollFor('the daemon to tick', async () => ((await run('cat /tmp/tick')).stdout ? true : undefined))).toBe(true)
    expect(await run('echo still here')).toEqual({ exitCode: 0, stdout: 'still here\n', stderr: '' })
  })
})
