import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { MachineError, UsageError } from '../../errors/index.js'
import { openStore } from '../../store/findStore.js'
import { updateRef } from '../../store/refs.js'
import type { Store } from '../../store/Store.js'
import { cameFromElsewhere } from '../../world/checkout/cameFromElsewhere.js'
import { readSnapshot } from '../../world/tree/readObjects.js'
import type { ForkOptions, MachineInfo } from '../MachineBackend.js'
import { FRESH_START_INPUT, FRESH_START_PATH } from '../image/freshStartElf.js'
import { readMachineImage } from '../image/MachineImage.js'
import type { MachineLayer } from '../../objects/MachineLayer.js'
import { readMachineLayer } from '../MachineLayer.js'
import { type SnapshotFiles, snapshotFiles } from '../machineFiles.js'
import { createRecord, liveRef, type MachineRecord, machineDir, newMachineId, started, startingRecord, writeRecord } from '../machineRecords.js'
import { runTool } from '../runTool.js'
import { acceleratorForState, qemuVersion } from './accelerator.js'
import { guestAgentFor } from './GuestChannel.js'
import { enterLimits, limitsAlongside } from './machineLimits.js'
import { printfEscaped } from './printfEscaped.js'
import { startIncoming, withQmp } from './qemuSteps.js'
import { info, killRecord, sockets, watchOf, wholeNumber, withAgent } from './qemuProcess.js'
import { watched } from './watchdog.js'
import { startClock, ttlSeconds } from './timeToLive.js'
import { type NetPlan, netPlan, nicOf, withEffectsStore } from '../net/machineNet.js'
import { BROWSER_RECIPE } from '../browser/browserGuest.js'

/** Most children one fork starts. */
const MAX_FORK = 64

/** How long a child may take to answer its first command before it is given up (MachineError): a guest that never answers must not hang its caller. */
const FRESH_DEADLINE_MS = 120_000

/**
 * Start `n` children from a snapshot image, in parallel: each maps the snapshot's RAM
 * copy-on-write (`share=off`), has a qcow2 overlay of its own over the snapshot's disk,
 * loads the device state and continues; its first command sets the clock and reseeds its
 * random generator (a child holds its parent's). A child that fails takes the others down.
 */
export async function forkQemu(o: ForkOptions): Promise<MachineInfo[]> {
  const { store } = await openStore(o)
  const n = wholeNumber(o.n, 'n', 1, MAX_FORK)
  const snap = await readSnapshot(store, o.image)
  if (!snap.machine) throw new UsageError(`image ${o.image} has no machine layer: take one with forkpoint machine snapshot`, { value: o.image })
  if (!o.trustMachine && (await cameFromElsewhere(store, o.image)))
    throw new UsageError(
      `image ${o.image} came from another store: its machine's device state is a QEMU migration stream, which QEMU does not read as hostile input; verify the image's signature (pull --verify-key) and fork it with --trust-machine`,
      { option: 'trustMachine', value: o.image },
    )
  const layer = await readMachineLayer(store, snap.machine)
  const version = await qemuVersion()
  if (layer.qemuVersion !== version)
    throw new UsageError(`the machine was saved by QEMU ${layer.qemuVersion}; this is QEMU ${version}, which cannot load its device state`, { value: layer.qemuVersion })
  const image = await readMachineImage(store, layer.image)
  const accelerator = await acceleratorForState(o.accel ?? 'auto', layer.accelerator, image.kernel)
  const saved = await snapshotFiles(store, snap.machine, layer)
  const agent = guestAgentFor(image.rootfs !== undefined)
  const ttl = ttlSeconds(o.ttl)
  const net = await withEffectsStore(store, await netPlan(o))
  if (net && !layer.nic)
    throw new UsageError(`image ${o.image}'s machine has no network device (it was started with --net none): its children cannot have one`, { option: 'net', value: 'egress' })
  if (net?.publish.length && n > 1)
    throw new UsageError('--publish takes a host port, which one child can hold: fork one child at a time to publish', { option: 'publish', value: n })
  const started = await Promise.allSettled(
    Array.from({ length: n }, () => startChild(store, o, layer, saved, { accelerator, agent }, { ttl, net, cdp: image.recipe === BROWSER_RECIPE })),
  )
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected')
  if (failed) {
    for (const s of started) if (s.status === 'fulfilled') await killRecord(store, s.value.id)
    throw failed.reason
  }
  return started.map((s) => (s as PromiseFulfilledResult<MachineInfo>).value)
}

async function startChild(
  store: Store,
  o: ForkOptions,
  layer: MachineLayer,
  saved: SnapshotFiles,
  { accelerator, agent }: Pick<MachineRecord, 'accelerator' | 'agent'>,
  { ttl, net, cdp }: { ttl: number | null; net: NetPlan | null; cdp: boolean },
): Promise<MachineInfo> {
  const id = newMachineId()
  const dir = machineDir(store, id)
  const launch = {
    boot: null,
    memoryMiB: layer.memoryMiB,
    ram: { path: saved.ram, share: false },
    disk: join(dir, 'disk.qcow2'),
    sockets: sockets(id),
    console: join(dir, 'console.log'),
    accelerator,
    nic: layer.nic ? (nicOf(net) ?? { open: false, guestPorts: [] }) : null,
    cdp,
  }
  const record = startingRecord({ id, image: layer.image, launch, agent, from: o.image, detached: o.detached ?? false })
  createRecord(store, record)
  try {
    const [, limits] = await limitsAlongside(layer.memoryMiB, runTool('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', saved.disk, '-F', 'raw', launch.disk]))
    record.cgroups = limits.map((g) => g.dir)
    writeRecord(store, record)
    await updateRef({ store, name: liveRef(id), id: o.image, message: `machine fork ${id}` })
    const { child, pid } = await startIncoming(launch, saved.devices, {
      machine: id,
      log: join(dir, 'qemu.log'),
      detached: record.detached,
      stateWithoutRam: true,
      ttlSeconds: ttl,
      net,
    })
    record.pid = pid
    writeRecord(store, record)
    await enterLimits(limits, record.pid)
    await withQmp(launch.sockets.qmp, id, (qmp) => qmp.execute('cont'))
    const fresh = await withAgent(record, (agent) =>
      watched(watchOf(record), agent.exec(freshStart()), { ms: FRESH_DEADLINE_MS, what: `its first command's answer within ${FRESH_DEADLINE_MS / 1000} s` }),
    )
    if (fresh.exitCode !== 0) throw new MachineError(`machine ${id}: setting its clock and reseeding its random generator failed: ${fresh.stderr}`, { machine: id })
    if (ttl !== null) record.expiresAt = startClock(child, ttl, id)
    return info(started(store, record))
  } catch (err) {
    await killRecord(store, id, { keepLogs: true, failure: (err as Error).message })
    throw err
  }
}

/**
 * A child's first command: the host's time (the guest's clock stopped at the snapshot)
 * and a seed of its own, written by the shell's printf builtin for the one program it
 * starts, `FRESH_START_PATH` (src/machine/image/freshStartElf.ts).
 */
function freshStart(): string {
  const input = Buffer.alloc(48)
  const now = Date.now()
  input.writeBigInt64LE(BigInt(Math.floor(now / 1000)), 0)
  input.writeBigInt64LE(BigInt((now % 1000) * 1_000_000), 8)
  randomBytes(32).copy(input, 16)
  return `printf %b '${printfEscaped(input)}' > ${FRESH_START_INPUT} && ${FRESH_START_PATH}`
}
