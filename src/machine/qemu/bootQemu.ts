import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { AcceleratorFailedError, UsageError } from '../../errors/index.js'
import { openStore } from '../../store/findStore.js'
import { updateRef } from '../../store/refs.js'
import type { BootOptions, MachineInfo } from '../MachineBackend.js'
import { MAX_MEMORY_MIB } from '../../objects/MachineLayer.js'
import { type ImageFiles, imageFiles } from '../machineFiles.js'
import { BROWSER_RECIPE } from '../browser/browserGuest.js'
import { createRecord, liveRef, machineDir, newMachineId, started, startingRecord, writeRecord } from '../machineRecords.js'
import { runTool } from '../runTool.js'
import type { Store } from '../../store/Store.js'
import { readMachineImage } from '../image/MachineImage.js'
import { planAccelerator, rememberVerdict } from './accelerator.js'
import { guestAgentFor } from './GuestChannel.js'
import { launchQemu, waitForSocket } from './launchQemu.js'
import { enterLimits, limitsAlongside } from './machineLimits.js'
import type { Accelerator } from '../../objects/MachineLayer.js'
import type { QemuLaunch } from './qemuArgs.js'
import { info, killRecord, sockets, watchOf, wholeNumber, withAgent } from './qemuProcess.js'
import { stopReason, watched } from './watchdog.js'
import { startClock, ttlSeconds } from './timeToLive.js'
import { type NetPlan, netPlan, nicOf, withEffectsStore } from '../net/machineNet.js'

/** How long a boot may take to start the guest's agent before the machine is given up (MachineError): generous, a boot took 2-8 s under TCG on a busy two-core host. */
const BOOT_DEADLINE_MS = 300_000

/**
 * How long a boot on KVM may take to reach the guest's agent before KVM is judged unable
 * to run it: a working KVM boots our guests in about a second; a nested KVM that cannot
 * run them hangs as often as it reports an internal error.
 */
const KVM_BOOT_MS = 30_000

/**
 * Boot a machine image cold: RAM in a file of its own, a fresh ext4 disk, and wait for its
 * agent's hello. With `accel: 'auto'` and no verdict yet for this kernel here, the boot
 * itself probes KVM: it runs on KVM under a short bound, and where KVM fails it (the
 * watchdog's AcceleratorFailedError) the verdict is kept and the machine boots on TCG.
 */
export async function bootQemu(o: BootOptions): Promise<MachineInfo> {
  const { store } = await openStore(o)
  const memoryMiB = wholeNumber(o.memoryMiB ?? 256, 'memoryMiB', 16, MAX_MEMORY_MIB)
  const diskMiB = o.diskMiB === undefined ? null : wholeNumber(o.diskMiB, 'diskMiB', 8, 1 << 20)
  const seconds = ttlSeconds(o.ttl)
  const net = await withEffectsStore(store, await netPlan(o))
  const [files, image] = await Promise.all([imageFiles(store, o.image), readMachineImage(store, o.image)])
  const boot = (accelerator: Accelerator, probe: boolean) =>
    bootOn(store, o, files, { memoryMiB, diskMiB, accelerator, probe, ttlSeconds: seconds, net, cdp: image.recipe === BROWSER_RECIPE })
  const plan = await planAccelerator(o.accel ?? 'auto', image.kernel)
  if (plan.accelerator !== 'probe') return boot(plan.accelerator, false)
  try {
    const machine = await boot('kvm', true)
    rememberVerdict(plan.key, { accelerator: 'kvm', reason: 'a boot of this kernel on KVM reached its agent' })
    return machine
  } catch (err) {
    if (!(err instanceof AcceleratorFailedError)) throw err
    rememberVerdict(plan.key, {
      accelerator: 'tcg',
      reason: `/dev/kvm is here, but a boot of this kernel on KVM failed (${stopReason(err.data, `its agent's first answer within ${KVM_BOOT_MS / 1000} s`)})`,
    })
    return boot('tcg', false)
  }
}

interface BootPlan {
  memoryMiB: number
  diskMiB: number | null
  accelerator: Accelerator
  ttlSeconds: number | null
  net: NetPlan | null
  /** Whether it has a CDP port: a browser machine. */
  cdp: boolean
  /** A boot that finds out whether KVM works: when KVM fails it, nothing of it is kept (the machine boots again on TCG). */
  probe: boolean
}

async function bootOn(store: Store, o: BootOptions, files: ImageFiles, p: BootPlan): Promise<MachineInfo> {
  const id = newMachineId()
  const dir = machineDir(store, id)
  const launch: QemuLaunch = {
    boot: { kernel: files.kernel, initrd: files.initrd, cmdline: files.cmdline },
    memoryMiB: p.memoryMiB,
    ram: { path: join(dir, 'ram'), share: true },
    disk: join(dir, 'disk.qcow2'),
    sockets: sockets(id),
    console: join(dir, 'console.log'),
    accelerator: p.accelerator,
    nic: nicOf(p.net),
    cdp: p.cdp,
  }
  const record = startingRecord({ id, image: o.image, launch, agent: guestAgentFor(files.rootfs !== null), from: null, detached: o.detached ?? false })
  createRecord(store, record)
  try {
    const [, limits] = await limitsAlongside(p.memoryMiB, files.rootfs ? rootDisk(launch.disk, files.rootfs, p.diskMiB) : freshDisk(dir, p.diskMiB ?? DEFAULT_DISK_MIB))
    record.cgroups = limits.map((g) => g.dir)
    writeRecord(store, record)
    const log = join(dir, 'qemu.log')
    const launched = await launchQemu(launch, { detached: record.detached, log, machine: id, ttlSeconds: p.ttlSeconds, net: p.net })
    const { child, pid } = launched
    record.pid = pid
    writeRecord(store, record)
    await enterLimits(limits, record.pid)
    await updateRef({ store, name: liveRef(id), id: o.image, message: `machine start ${id}` })
    await waitForSocket(launched, launch.sockets.agent, { log, machine: id })
    const bound = p.accelerator === 'kvm' ? KVM_BOOT_MS : BOOT_DEADLINE_MS
    await withAgent(record, (agent) => watched(watchOf(record), agent.waitForHello(), { ms: bound, what: `its agent's first answer within ${bound / 1000} s` }))
    if (p.ttlSeconds !== null) record.expiresAt = startClock(child, p.ttlSeconds, id)
    return info(started(store, record))
  } catch (err) {
    await killRecord(store, id, { keepLogs: !(p.probe && err instanceof AcceleratorFailedError), failure: (err as Error).message })
    throw err
  }
}

/** The disk of a machine booted cold: a blank one's size, and the room a root filesystem's is given beyond the image's filesystem. */
const DEFAULT_DISK_MIB = 256

/**
 * A root filesystem image's disk: a qcow2 overlay over the image's filesystem, of
 * `diskMiB` (the filesystem's size and 256 MiB more by default), which the guest's init
 * grows the filesystem to. A size smaller than the filesystem is refused.
 */
async function rootDisk(disk: string, rootfs: { path: string; bytes: number }, diskMiB: number | null): Promise<string> {
  const imageMiB = Math.ceil(rootfs.bytes / 2 ** 20)
  if (diskMiB !== null && diskMiB < imageMiB)
    throw new UsageError(`the image's root filesystem takes ${imageMiB} MiB: a disk of ${diskMiB} MiB cannot hold it`, { option: 'diskMiB', value: diskMiB })
  await runTool('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', rootfs.path, '-F', 'raw', disk, `${diskMiB ?? imageMiB + DEFAULT_DISK_MIB}M`])
  return disk
}

/** An empty ext4 disk the guest mounts at /data, made on the host (busybox has no mkfs.ext4), as a qcow2. */
async function freshDisk(dir: string, diskMiB: number): Promise<string> {
  const raw = join(dir, 'disk.raw')
  await runTool('qemu-img', ['create', '-q', '-f', 'raw', raw, `${diskMiB}M`])
  await runTool('mkfs.ext4', ['-q', '-F', '-L', 'data', '-m', '0', '-E', 'lazy_itable_init=0,lazy_journal_init=0', raw])
  await runTool('qemu-img', ['convert', '-f', 'raw', '-O', 'qcow2', raw, join(dir, 'disk.qcow2')])
  rmSync(raw)
  return join(dir, 'disk.qcow2')
}
