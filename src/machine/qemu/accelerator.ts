import { execFile, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { promisify } from 'node:util'
import { MachineUnavailableError } from '../../errors/index.js'
import { type Accelerator, QEMU_BINARY } from './qemuArgs.js'

/** Which accelerator machines use here, and why. */
export interface AcceleratorChoice {
  accelerator: Accelerator
  reason: string
}

/** How long KVM may take to answer before TCG is used: a /dev/kvm that hangs (a nested host without it) must not hang every start. */
const KVM_ANSWER_MS = 10_000

let choice: Promise<AcceleratorChoice> | null = null

/** KVM when /dev/kvm exists and a QEMU started with it answers `query-kvm` within 10 s; TCG (software emulation) otherwise. Asked once a process. */
export function chooseAccelerator(): Promise<AcceleratorChoice> {
  choice ??= probeKvm()
  return choice
}

async function probeKvm(): Promise<AcceleratorChoice> {
  if (!existsSync('/dev/kvm')) return { accelerator: 'tcg', reason: 'no /dev/kvm' }
  // the machine and CPU machines get: here KVM answered for `-M none`, then QEMU aborted setting the host CPU's MSRs on a microvm
  const answer = await askQemu(
    ['-accel', 'kvm', '-M', 'microvm,x-option-roms=off', '-cpu', 'host', '-nodefaults', '-no-user-config', '-display', 'none', '-S', '-qmp', 'stdio'],
    [{ execute: 'qmp_capabilities' }, { execute: 'query-kvm' }, { execute: 'cont' }, { execute: 'query-status' }, { execute: 'quit' }],
  )
  if (answer.timedOut) return { accelerator: 'tcg', reason: `/dev/kvm exists but QEMU with KVM did not answer within ${KVM_ANSWER_MS / 1000} s` }
  const answers = answer.lines.map((l) => JSON.parse(l) as { return?: { enabled?: boolean; status?: string } })
  const enabled = answers.some((m) => m.return?.enabled === true)
  const ran = answers.some((m) => m.return?.status === 'running')
  if (enabled && ran) return { accelerator: 'kvm', reason: '/dev/kvm answered and a microvm ran' }
  return { accelerator: 'tcg', reason: `/dev/kvm exists but KVM does not work: ${answer.stderr.trim().split('\n')[0] || 'QEMU said it is not enabled'}` }
}

function askQemu(args: string[], commands: object[]): Promise<{ lines: string[]; stderr: string; timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(QEMU_BINARY, args, { stdio: ['pipe', 'pipe', 'pipe'] })
    let [stdout, stderr] = ['', '']
    const timer = setTimeout(() => child.kill('SIGKILL'), KVM_ANSWER_MS)
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()))
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()))
    child.on('error', (err) => {
      clearTimeout(timer)
      reject(new MachineUnavailableError(`${QEMU_BINARY} cannot run: ${err.message}`, { tool: QEMU_BINARY, hint: 'apt-get install qemu-system-x86 qemu-utils' }))
    })
    child.on('close', (_code, signal) => {
      clearTimeout(timer)
      resolve({ lines: stdout.split('\n').filter((l) => l.startsWith('{')), stderr, timedOut: signal === 'SIGKILL' })
    })
    child.stdin.end(commands.map((c) => JSON.stringify(c)).join('\n') + '\n')
  })
}

let version: Promise<string> | null = null

/** QEMU's version number (`7.2.22`): a device state loads only into the QEMU that wrote it. */
export function qemuVersion(): Promise<string> {
  version ??= promisify(execFile)(QEMU_BINARY, ['--version']).then(
    ({ stdout }) => /version (\S+)/.exec(stdout)?.[1] ?? stdout.trim(),
    (err: Error) => {
      version = null
      throw new MachineUnavailableError(`${QEMU_BINARY} cannot run: ${err.message}`, { tool: QEMU_BINARY, hint: 'apt-get install qemu-system-x86 qemu-utils' })
    },
  )
  return version
}
