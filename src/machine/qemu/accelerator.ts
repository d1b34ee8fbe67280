import { execFile } from 'node:child_process'
import { accessSync, constants, existsSync } from 'node:fs'
import { release } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { z } from 'zod'
import { MachineUnavailableError, UsageError } from '../../errors/index.js'
import { atomicWriteSync } from '../../util/atomicWrite.js'
import { forkpointCacheDir } from '../image/cacheDir.js'
import { ACCELERATORS, type Accelerator } from '../../objects/MachineLayer.js'
import { QEMU_BINARY } from './qemuArgs.js'
import { readStateTextOrNull } from '../../store/readStateFile.js'

/** What a caller asks for: `auto` (the default) uses KVM only where a boot of the guest's own kernel on it has reached the guest's agent. */
export type AcceleratorRequest = Accelerator | 'auto'
export const ACCELERATOR_REQUESTS: readonly AcceleratorRequest[] = ['auto', 'kvm', 'tcg']

/** Which accelerator a machine runs on, and why. */
export interface AcceleratorChoice {
  accelerator: Accelerator
  reason: string
}

/** What `auto` does next for one guest kernel: run on what is known, or boot on KVM to find out (the boot is the probe). */
export type AcceleratorPlan = AcceleratorChoice | { accelerator: 'probe'; key: string }

export function acceleratorRequest(value: string): AcceleratorRequest {
  if ((ACCELERATOR_REQUESTS as readonly string[]).includes(value)) return value as AcceleratorRequest
  throw new UsageError(`the accelerator must be one of ${ACCELERATOR_REQUESTS.join(', ')}, not ${JSON.stringify(value)}`, { option: 'accel', value })
}

/**
 * The plan for booting `kernel` (a blob digest). A request for one accelerator is kept
 * as it is. `auto` takes TCG where /dev/kvm is missing or not ours to open, the verdict
 * an earlier probe of this kernel left on this host and QEMU (the user's cache), and
 * otherwise a probe: a KVM that answers `query-kvm` may still fail every real guest
 * (a nested KVM here dies with "KVM internal error … emulation failure", or hangs).
 */
export async function planAccelerator(request: AcceleratorRequest, kernel: string): Promise<AcceleratorPlan> {
  if (request !== 'auto') return { accelerator: request, reason: `asked for ${request}` }
  const device = kvmDeviceProblem()
  if (device) return { accelerator: 'tcg', reason: device }
  const key = await verdictKey(kernel)
  return readVerdicts()[key] ?? { accelerator: 'probe', key }
}

/** A verdict holds for one guest kernel on one host kernel and QEMU. */
const verdictKey = async (kernel: string) => `${release()}|${await qemuVersion()}|${kernel}`

/** Drop the verdict on `kernel`, so that its next `auto` boot probes afresh (`machine doctor`). */
export async function forgetVerdict(kernel: string): Promise<void> {
  const key = await verdictKey(kernel)
  const { [key]: _forgotten, ...rest } = readVerdicts()
  writeVerdicts(rest)
}

/**
 * The accelerator a saved machine continues on: the one it was saved on (a device state
 * loads on no other). A request for another, or KVM where it does not work here, is refused.
 */
export async function acceleratorForState(request: AcceleratorRequest, saved: Accelerator, kernel: string): Promise<Accelerator> {
  if (request !== 'auto' && request !== saved)
    throw new UsageError(`the machine was saved running on ${saved}; its device state loads on ${saved} only, not ${request}`, { option: 'accel', value: request })
  if (saved === 'tcg' || request === 'kvm') return saved
  const plan = await planAccelerator('auto', kernel)
  if (plan.accelerator === 'tcg') throw new UsageError(`the machine was saved running on kvm; machines here run on tcg (${plan.reason})`, { option: 'accel', value: saved })
  return saved
}

function kvmDeviceProblem(): string | null {
  if (!existsSync('/dev/kvm')) return 'no /dev/kvm'
  try {
    accessSync('/dev/kvm', constants.R_OK | constants.W_OK)
    return null
  } catch (err) {
    return `/dev/kvm is not open to this user (${(err as NodeJS.ErrnoException).code})`
  }
}

/** Keep what a probe found, so later boots of the same kernel here go straight to it. The cache is a convenience: a write that fails is let go. */
export function rememberVerdict(key: string, choice: AcceleratorChoice): void {
  writeVerdicts({ ...readVerdicts(), [key]: choice })
}

function writeVerdicts(verdicts: Record<string, AcceleratorChoice>): void {
  try {
    atomicWriteSync(verdictsFile(), [Buffer.from(JSON.stringify(verdicts, null, 2) + '\n')])
  } catch {
    // another user's cache, or a read-only one: the next boot probes again
  }
}

const Verdicts = z.record(z.string().max(512), z.object({ accelerator: z.enum(ACCELERATORS), reason: z.string().max(2000) }))

function readVerdicts(): Record<string, AcceleratorChoice> {
  try {
    return Verdicts.parse(JSON.parse(readStateTextOrNull(verdictsFile()) ?? '{}'))
  } catch {
    return {} // none yet, or not ours to trust: probe again
  }
}

const verdictsFile = () => join(forkpointCacheDir(), 'accelerators.json')

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
