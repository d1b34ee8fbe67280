import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  AcceleratorFailedError,
  GuestStoppedError,
  MachineError,
  UsageError,
  bootMachine,
  killMachine,
  listMachines,
  machineDoctor,
  openStore,
  removeMachine,
} from '../../src/index.js'
import type { MachineImage } from '../../src/index.js'
import { qemuFailed } from '../../src/machine/qemu/launchQemu.js'
import { canonicalBytes } from '../../src/util/canonicalJson.js'
import { runCli as run } from '../helpers/cli.js'
import { MACHINE_TIMEOUT, execOrHang, killAllMachines, machineWorkspace, processAlive, settlesWithin } from '../helpers/machines.js'
import { sharedMachineImage } from '../helpers/sharedMachineImages.js'

/**
 * The watchdog: a guest that cannot answer ends the call that waits on it with a clear
 * error instead of a hang, and a failed machine keeps its logs until `machine rm`. Each
 * wait here is bounded by `settlesWithin`, far above the watchdog's own bounds: a hang
 * shows as that failure, not as the test's timeout.
 */
let dir: string
let image: string
/** The busybox image with `rdinit=` naming no program: its kernel panics, and `panic=-1` makes QEMU exit. */
let panicking: string

const HANG = 200_000

beforeAll(async () => {
  dir = await machineWorkspace('machine-watchdog')
  image = await sharedMachineImage(dir, 'busybox')
  const { store } = await openStore({ dir })
  const good = (await store.readObject(image as never)) as unknown as MachineImage
  panicking = await store.writeBlob(canonicalBytes({ ...good, cmdline: `${good.cmdline} rdinit=/no-such-init` }))
}, MACHINE_TIMEOUT)

afterAll(async () => {
  if (dir) await killAllMachines(dir)
}, MACHINE_TIMEOUT)

describe('the machine watchdog', { timeout: MACHINE_TIMEOUT }, () => {
  it('ends the boot of a guest whose kernel panics with GuestStoppedError (exit 5) naming the panic', async () => {
    const err = await settlesWithin(
      bootMachine({ dir, image: panicking }).catch((e: unknown) => e),
      HANG,
      'a boot of a panicking guest',
    )
    expect(err).toBeInstanceOf(GuestStoppedError)
    expect(err).toMatchObject({ exitCode: 5, data: { status: 'exited' } })
    expect((err as GuestStoppedError).message).toMatch(/Kernel panic/)
  })

  it('keeps a failed machine, listed as failed with its console log, until machine rm', async () => {
    const failed = (await listMachines({ dir })).filter((m) => m.failure !== null)
    expect(failed).toHaveLength(1)
    const [machine] = failed
    expect(machine).toMatchObject({ running: false, failure: expect.stringMatching(/the guest stopped/) })
    const folder = join(dir, '.forkpoint', 'machines', machine!.id)
    expect(readFileSync(join(folder, 'console.log'), 'utf8')).toMatch(/Kernel panic/)
    expect(existsSync(join(folder, 'disk.qcow2'))).toBe(false) // only the record and the logs are kept
    expect(existsSync(join(folder, 'ram'))).toBe(false)
    const listed = await run(['machine', 'ls'], { cwd: dir })
    expect(listed.stdout).toMatch(new RegExp(`^${machine!.id}\\tfailed\\t`, 'm'))
    await removeMachine({ dir, machine: machine!.id })
    expect(existsSync(folder)).toBe(false)
    expect(await listMachines({ dir })).toEqual([])
  })

  it('ends a command whose guest crashes under it with GuestStoppedError, not a closed socket (exit 6) or a hang', async () => {
    const machine = await bootMachine({ dir, image })
    const err = await settlesWithin(
      execOrHang({ dir, machine: machine.id, command: 'echo c > /proc/sysrq-trigger' }).catch((e: unknown) => e),
      HANG,
      'a command that crashes its guest',
    )
    expect(err).toBeInstanceOf(GuestStoppedError)
    expect(err).toMatchObject({ exitCode: 5 })
    expect((err as GuestStoppedError).message).toMatch(/Kernel panic - not syncing: sysrq triggered crash/)
    expect(processAlive(machine.pid)).toBe(false)
    await removeMachine({ dir, machine: machine.id })
  })

  it('runs QEMU under its own seccomp filter (-sandbox on)', async () => {
    const machine = await bootMachine({ dir, image })
    expect(readFileSync(`/proc/${machine.pid}/status`, 'utf8')).toMatch(/^Seccomp:\s+2$/m)
    await killMachine({ dir, machine: machine.id })
  })

  it('refuses to remove a running machine (exit 2): machine kill stops it', async () => {
    const machine = await bootMachine({ dir, image })
    expect(await removeMachine({ dir, machine: machine.id }).catch((e: unknown) => e)).toBeInstanceOf(UsageError)
    expect((await execOrHang({ dir, machine: machine.id, command: 'echo alive' })).stdout).toBe('alive\n')
    const killed = await run(['machine', 'kill', machine.id], { cwd: dir })
    expect(killed.code).toBe(0)
  })
})

describe('the accelerator', { timeout: MACHINE_TIMEOUT }, () => {
  it('doctor boots a guest to find it, and names it and why; a forced KVM that fails a guest is AcceleratorFailedError (exit 2)', async () => {
    const doctor = await machineDoctor()
    expect(doctor.reason).not.toBe('')
    const kvm = await bootMachine({ dir, image, accel: 'kvm' }).catch((e: unknown) => e)
    if (doctor.accelerator === 'kvm') {
      expect(kvm).toMatchObject({ accelerator: 'kvm', running: true })
      return
    }
    // KVM is missing, not ours, or fails this kernel (a nested KVM here): each says why
    expect(doctor.reason).toMatch(/no \/dev\/kvm|not open to this user|a boot of this kernel on KVM failed/)
    if (!existsSync('/dev/kvm') || /not open/.test(doctor.reason)) return
    expect(kvm).toBeInstanceOf(AcceleratorFailedError)
    expect(kvm).toMatchObject({ exitCode: 2, message: expect.stringMatching(/--accel tcg/) })
  })

  it('runs on what it is asked for: tcg by option, and by FORKPOINT_ACCEL through the CLI', async () => {
    const m = await bootMachine({ dir, image, accel: 'tcg' })
    expect(m.accelerator).toBe('tcg')
    const started = await run(['machine', 'start', image, '--json'], { cwd: dir, env: { FORKPOINT_ACCEL: 'tcg' } })
    expect(started.code).toBe(0)
    expect(JSON.parse(started.stdout)).toMatchObject({ accelerator: 'tcg' })
  })

  it('a KVM that ends QEMU before the watchdog watches is AcceleratorFailedError too; any other early exit stays MachineError', async () => {
    const exited = spawn('sh', ['-c', 'exit 1'])
    await once(exited, 'exit')
    const log = join(dir, 'early-exit.log')
    writeFileSync(log, 'KVM internal error. Suberror: 1\nemulation failure\nRAX=0000000000000000\n')
    const early = (accelerator: 'kvm' | 'tcg') => qemuFailed(exited, { accelerator, console: join(dir, 'no-console.log') }, { log, machine: 'm0' })
    expect(early('kvm')).toBeInstanceOf(AcceleratorFailedError)
    expect(early('kvm')).toMatchObject({ exitCode: 2, message: expect.stringMatching(/KVM internal error[^]*--accel tcg/) })
    expect(early('tcg')).toBeInstanceOf(MachineError)
    expect(early('tcg')).not.toBeInstanceOf(AcceleratorFailedError)
    writeFileSync(log, 'qemu-system-x86_64: -drive file=x: Could not open x\n')
    expect(early('kvm')).not.toBeInstanceOf(AcceleratorFailedError)
  })

  it('refuses an accelerator it does not know (exit 2)', async () => {
    const r = await run(['machine', 'start', image, '--accel', 'hvf'], { cwd: dir })
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/auto, kvm, tcg/)
  })
})
