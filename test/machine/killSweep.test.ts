import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootMachine, execMachine, killMachine, listMachines, machineGc, snapshotMachine } from '../../src/index.js'
import { CLI } from '../helpers/cli.js'
import { MACHINE_TIMEOUT, execOrHang, killAllMachines, machineWorkspace, pollFor, qemuLaunchersNaming, qemuProcessesNaming, settlesWithin } from '../helpers/machines.js'
import { sharedMachineImage } from '../helpers/sharedMachineImages.js'

/**
 * kill -9 of the CLI at points through `machine start`, `machine fork` and `machine
 * snapshot`, each point an observed state (a record written, a disk made, a QEMU started,
 * a pid written down, a machine paused): afterwards `machine ls` accounts for every QEMU
 * of the store, `machine gc` leaves only machines that answer, and nothing else of the
 * store's machines runs or stays on disk.
 */
let dir: string
let image: string
let snapshot: string

const machines = () => join(dir, '.forkpoint', 'machines')
const folders = () => (existsSync(machines()) ? readdirSync(machines()).filter((n) => /^m[0-9a-f]{8}$/.test(n)) : [])
const records = () => folders().map((id) => JSON.parse(readFileSync(join(machines(), id, 'machine.json'), 'utf8')) as { pid: number; starting?: unknown; pausedBy?: unknown })
const qemus = () => qemuProcessesNaming(join(dir, '.forkpoint'))

beforeAll(async () => {
  dir = await machineWorkspace('machine-kill-sweep')
  image = await sharedMachineImage(dir, 'busybox')
  const parent = await bootMachine({ dir, image })
  snapshot = (await snapshotMachine({ dir, machine: parent.id })).image
  await killMachine({ dir, machine: parent.id })
}, MACHINE_TIMEOUT)

afterAll(async () => {
  if (dir) await killAllMachines(dir)
}, MACHINE_TIMEOUT)

/** Start the CLI and SIGKILL it the moment `point` holds (checked as often as the event loop turns); whether it was still running then. */
async function killWhen(args: string[], point: () => boolean): Promise<boolean> {
  const cli: ChildProcess = spawn(CLI, args, {
    cwd: dir,
    stdio: 'ignore',
    env: { PATH: process.env['PATH'], HOME: process.env['HOME'], XDG_CACHE_HOME: process.env['XDG_CACHE_HOME'], FORKPOINT_ACCEL: 'tcg' },
  })
  const exited = new Promise<void>((resolve) => cli.once('exit', () => resolve()))
  // a tight loop, not pollFor's backing off: some points last a few milliseconds
  for (;;) {
    if (cli.exitCode !== null || cli.signalCode !== null) return false
    if (point()) break
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  const killed = cli.kill('SIGKILL')
  await exited
  return killed
}

/** What is left once `machine gc` ran: every machine listed answers, every QEMU of the store is one of theirs, every folder theirs. */
async function expectOnlyWorkingMachines(): Promise<void> {
  const listed = await listMachines({ dir })
  const ownQemus = listed.filter((m) => m.running).map((m) => m.pid)
  expect(qemus().sort()).toEqual(expect.arrayContaining(ownQemus))
  await machineGc({ dir })
  const left = await listMachines({ dir })
  for (const m of left) {
    expect(m.state, m.id).toBe('running')
    expect((await execOrHang({ dir, machine: m.id, command: 'echo up' })).stdout).toBe('up\n')
  }
  expect(qemus().sort()).toEqual(left.map((m) => m.pid).sort())
  expect(folders().sort()).toEqual(left.map((m) => m.id).sort())
  for (const m of left) await killMachine({ dir, machine: m.id })
  expect(qemus()).toEqual([])
  await pollFor('the launchers of the killed QEMUs to end', () => (qemuLaunchersNaming(join(dir, '.forkpoint')).length === 0 ? true : undefined))
}

const anyQemuWithoutPid = () => qemus().length > 0 && records().some((r) => r.pid === -1)

describe('kill -9 of the CLI leaves nothing behind', { timeout: MACHINE_TIMEOUT }, () => {
  const forkPoints: Array<[string, () => boolean]> = [
    ['a record written', () => folders().length > 0],
    ['a disk made', () => folders().some((id) => existsSync(join(machines(), id, 'disk.qcow2')))],
    ['a QEMU started, its pid not yet written down', anyQemuWithoutPid],
    ['every QEMU started', () => qemus().length === 3],
    ['every pid written down', () => records().length === 3 && records().every((r) => r.pid > 0)],
    ['a child started', () => records().some((r) => r.pid > 0 && r.starting === undefined)],
  ]
  for (const [name, point] of forkPoints)
    it(`machine fork -n 3, killed at: ${name}`, async () => {
      expect(await killWhen(['machine', 'fork', snapshot, '-n', '3'], point)).toBe(true)
      await expectOnlyWorkingMachines()
    })

  const startPoints: Array<[string, () => boolean]> = [
    ['a record written', () => folders().length > 0],
    ['QEMU started', () => qemus().length > 0],
    ['its pid written down', () => records().some((r) => r.pid > 0)],
  ]
  for (const [name, point] of startPoints)
    it(`machine start, killed at: ${name}`, async () => {
      expect(await killWhen(['machine', 'start', image], point)).toBe(true)
      await expectOnlyWorkingMachines()
    })

  it('machine snapshot, killed while the machine is paused: the next command lets it go on', async () => {
    const m = await bootMachine({ dir, image, detached: true })
    expect(await killWhen(['machine', 'snapshot', m.id], () => records().some((r) => r.pausedBy !== undefined))).toBe(true)
    expect((await listMachines({ dir })).find((x) => x.id === m.id)).toMatchObject({ state: 'paused' })
    const r = await settlesWithin(execMachine({ dir, machine: m.id, command: 'echo going' }), 120_000, 'exec on a machine a killed snapshot paused')
    expect(r.stdout).toBe('going\n')
    await expectOnlyWorkingMachines()
  })
})
