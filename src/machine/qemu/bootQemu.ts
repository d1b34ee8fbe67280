import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { UsageError } from '../../errors/index.js'
import { openStore } from '../../store/findStore.js'
import { updateRef } from '../../store/refs.js'
import type { BootOptions, MachineInfo } from '../MachineBackend.js'
import { MAX_MEMORY_MIB } from '../MachineLayer.js'
import { imageFiles } from '../machineFiles.js'
import { liveRef, type MachineRecord, machineDir, newMachineId, writeRecord } from '../machineRecords.js'
import { runTool } from '../runTool.js'
import { chooseAccelerator } from './accelerator.js'
import { guestAgentFor } from './GuestChannel.js'
import { launchQemu, qemuFailed, waitForSocket } from './launchQemu.js'
import { enterLimits, limitsAlongside } from './machineLimits.js'
import { qemuArgs, type QemuLaunch } from './qemuArgs.js'
import { deadline, info, killRecord, sockets, wholeNumber, withAgent } from './qemuProcess.js'

/** How long a boot may take to start the guest's agent before the machine is given up (MachineError): generous, a boot took 2-8 s under TCG on a busy two-core host. */
const BOOT_DEADLINE_MS = 300_000

/** Boot a machine image cold: RAM in a file of its own, a fresh ext4 disk, and wait for its agent's hello. */
export async function bootQemu(o: BootOptions): Promise<MachineInfo> {
  const { store } = await openStore(o)
  const memoryMiB = wholeNumber(o.memoryMiB ?? 256, 'memoryMiB', 16, MAX_MEMORY_MIB)
  const [files, { accelerator }] = await Promise.all([imageFiles(store, o.image), chooseAccelerator()])
  const diskMiB = o.diskMiB === undefined ? null : wholeNumber(o.diskMiB, 'diskMiB', 8, 1 << 20)
  const id = newMachineId()
  const dir = machineDir(store, id)
  mkdirSync(dir, { recursive: true })
  try {
    const [disk, limits] = await limitsAlongside(memoryMiB, files.rootfs ? rootDisk(dir, files.rootfs, diskMiB) : freshDisk(dir, diskMiB ?? DEFAULT_DISK_MIB))
    const { kernel, initrd, cmdline } = files
    const launch: QemuLaunch = {
      boot: { kernel, initrd, cmdline },
      memoryMiB,
      ram: { path: join(dir, 'ram'), share: true },
      disk,
      sockets: sockets(id),
      console: join(dir, 'console.log'),
      accelerator,
    }
    const detached = o.detached ?? false
    const child = launchQemu(qemuArgs(launch), { detached, log: join(dir, 'qemu.log'), machine: id })
    const record: MachineRecord = {
      id,
      pid: child.pid ?? -1,
      image: o.image,
      accelerator,
      launch,
      agent: guestAgentFor(files.rootfs !== null),
      from: null,
      head: null,
      detached,
      cgroups: limits.map((g) => g.dir),
      createdAt: new Date().toISOString(),
    }
    writeRecord(store, record)
    await enterLimits(limits, record.pid)
    await updateRef({ store, name: liveRef(id), id: o.image, message: `machine start ${id}` })
    try {
      await waitForSocket(child, launch.sockets.agent, { log: join(dir, 'qemu.log'), machine: id })
      await withAgent(record, (agent) =>
        deadline(agent.waitForHello(), BOOT_DEADLINE_MS, `machine ${id}: its agent did not start within ${BOOT_DEADLINE_MS / 1000} s; see ${launch.console}`),
      )
    } catch (err) {
      throw child.exitCode !== null || child.signalCode !== null ? qemuFailed(child, { log: join(dir, 'qemu.log'), machine: id }) : err
    }
    return info(record)
  } catch (err) {
    await killRecord(store, id)
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
async function rootDisk(dir: string, rootfs: { path: string; bytes: number }, diskMiB: number | null): Promise<string> {
  const imageMiB = Math.ceil(rootfs.bytes / 2 ** 20)
  if (diskMiB !== null && diskMiB < imageMiB)
    throw new UsageError(`the image's root filesystem takes ${imageMiB} MiB: a disk of ${diskMiB} MiB cannot hold it`, { option: 'diskMiB', value: diskMiB })
  const disk = join(dir, 'disk.qcow2')
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
