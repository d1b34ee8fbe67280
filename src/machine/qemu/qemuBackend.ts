import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { MachineError, UsageError } from '../../errors/index.js'
import { openStore } from '../../store/findStore.js'
import { updateRef } from '../../store/refs.js'
import type { Store } from '../../store/Store.js'
import { canonicalBytes } from '../../util/canonicalJson.js'
import { readSnapshot } from '../../world/readObjects.js'
import { makeSnapshot } from '../../world/Snapshot.js'
import { EMPTY_TREE } from '../../world/treeSource.js'
import { storeFilePieces } from '../filePieces.js'
import type { BootOptions, ForkOptions, MachineBackend, MachineInfo, MachineRef, MachineSnapshot, MachineStats } from '../MachineBackend.js'
import { type MachineLayer, MAX_MEMORY_MIB, readMachineLayer } from '../MachineLayer.js'
import { filesIn, imageFiles, keepSnapshotFiles, type SnapshotFiles, snapshotFiles, stagingDir } from '../machineFiles.js'
import { isRunning, listRecords, type MachineRecord, machineDir, newMachineId, readRecord, removeRecord, socketDir, writeRecord } from '../machineRecords.js'
import { runTool } from '../runTool.js'
import { chooseAccelerator, qemuVersion } from './accelerator.js'
import { GuestAgent } from './GuestAgent.js'
import { launchQemu, qemuFailed, waitForSocket } from './launchQemu.js'
import { limitMachine, releaseLimits } from './machineLimits.js'
import { qemuArgs, type QemuLaunch } from './qemuArgs.js'
import type { QmpClient } from './QmpClient.js'
import { migrateToFile, startIncoming, withQmp } from './qemuSteps.js'

/** The ref of a machine's latest snapshot image: its snapshots and its children's form a tree `log --all --graph` draws. */
export const machineRef = (id: string) => `refs/heads/machines/${id}`

/** Most children one fork starts. */
const MAX_FORK = 64

/**
 * How long a boot may take to start the guest's agent, and a child to answer its first
 * command, before the machine is given up (MachineError): a guest that never answers must
 * not hang its caller. Generous: under TCG on a busy two-core host a boot took 2-8 s.
 */
const BOOT_DEADLINE_MS = 300_000
const FRESH_DEADLINE_MS = 120_000

/** Machines as QEMU microVMs (docs/machine.md). */
export const qemuBackend: MachineBackend = {
  name: 'qemu',
  boot,
  exec: async (o) => withAgent(await runningRecord(o), (agent) => agent.exec(o.command)),
  snapshot,
  restore: async (o) => (await fork({ ...o, n: 1 }))[0]!,
  fork,
  kill,
  stats,
  list: async (o) => listRecords((await openStore(o)).store).map(info),
}

async function boot(o: BootOptions): Promise<MachineInfo> {
  const { store } = await openStore(o)
  const memoryMiB = wholeNumber(o.memoryMiB ?? 256, 'memoryMiB', 16, MAX_MEMORY_MIB)
  const diskMiB = wholeNumber(o.diskMiB ?? 256, 'diskMiB', 8, 1 << 20)
  const [files, { accelerator }] = await Promise.all([imageFiles(store, o.image), chooseAccelerator()])
  const id = newMachineId()
  const dir = machineDir(store, id)
  mkdirSync(dir, { recursive: true })
  try {
    const disk = await freshDisk(dir, diskMiB)
    const launch: QemuLaunch = { boot: files, memoryMiB, ram: { path: join(dir, 'ram'), share: true }, disk, sockets: sockets(id), console: join(dir, 'console.log'), accelerator }
    const detached = o.detached ?? false
    const child = launchQemu(qemuArgs(launch), { detached, log: join(dir, 'qemu.log'), machine: id })
    const record: MachineRecord = {
      id,
      pid: child.pid ?? -1,
      image: o.image,
      accelerator,
      launch,
      from: null,
      head: null,
      detached,
      cgroups: [],
      createdAt: new Date().toISOString(),
    }
    writeRecord(store, record)
    record.cgroups = await limitMachine(record.pid, memoryMiB)
    writeRecord(store, record)
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

/** An empty ext4 disk the guest mounts at /data, made on the host (busybox has no mkfs.ext4), as a qcow2. */
async function freshDisk(dir: string, diskMiB: number): Promise<string> {
  const raw = join(dir, 'disk.raw')
  await runTool('qemu-img', ['create', '-q', '-f', 'raw', raw, `${diskMiB}M`])
  await runTool('mkfs.ext4', ['-q', '-F', '-L', 'data', '-m', '0', '-E', 'lazy_itable_init=0,lazy_journal_init=0', raw])
  await runTool('qemu-img', ['convert', '-f', 'raw', '-O', 'qcow2', raw, join(dir, 'disk.qcow2')])
  rmSync(raw)
  return join(dir, 'disk.qcow2')
}

/**
 * Pause the machine, save it, let it go on; then store what was saved as a machine layer
 * and an image whose parent is the machine's previous snapshot (or the one it was forked
 * from). A machine with RAM of its own (booted cold) is paused while its device state is
 * written and its RAM file and disk copied. A forked child maps its RAM privately, so
 * there is no file to copy: its whole state, RAM included, is written while it is paused,
 * and a second QEMU, never run, loads that into a RAM file and writes the device state
 * alone (docs/machine.md).
 */
async function snapshot(o: MachineRef & { message?: string }): Promise<MachineSnapshot> {
  const { store } = await openStore(o)
  const record = await runningRecord(o)
  const staging = stagingDir(store)
  try {
    const files = filesIn(staging)
    const ownRam = record.launch.ram.share
    const pausedMs = await pausedWhile(record, async (qmp) => {
      await migrateToFile(qmp, ownRam ? files.devices : join(staging, 'whole'), ownRam)
      if (ownRam) await runTool('cp', ['--sparse=always', record.launch.ram.path, files.ram])
      await runTool('qemu-img', ['convert', '-U', '-f', 'qcow2', '-O', 'raw', record.launch.disk, files.disk])
    })
    if (!ownRam) await splitWholeState(record, staging, files)
    const saved = await storeSnapshot(store, record, files, o.message)
    keepSnapshotFiles(store, saved.layer, staging)
    return { ...saved, pausedMs }
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

async function pausedWhile(record: MachineRecord, save: (qmp: QmpClient) => Promise<void>): Promise<number> {
  return withQmp(record.launch.sockets.qmp, record.id, async (qmp) => {
    const start = performance.now()
    await qmp.execute('stop')
    try {
      await save(qmp)
    } finally {
      await qmp.execute('cont')
    }
    return performance.now() - start
  })
}

/** Load a whole state (RAM included) into a QEMU whose RAM is a file, and write its device state without the RAM. */
async function splitWholeState(record: MachineRecord, staging: string, files: SnapshotFiles): Promise<void> {
  const id = newMachineId()
  const overlay = join(staging, 'split.qcow2')
  await runTool('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', files.disk, '-F', 'raw', overlay])
  const launch = { ...record.launch, boot: null, ram: { path: files.ram, share: true }, disk: overlay, sockets: sockets(id), console: join(staging, 'split.log') }
  const o = { machine: record.id, log: join(staging, 'split-qemu.log'), detached: false, stateWithoutRam: false }
  const child = await startIncoming(launch, join(staging, 'whole'), o)
  try {
    await withQmp(launch.sockets.qmp, record.id, (qmp) => migrateToFile(qmp, files.devices, true))
  } finally {
    child.kill('SIGKILL')
    rmSync(socketDir(id), { recursive: true, force: true })
  }
}

async function storeSnapshot(store: Store, record: MachineRecord, files: SnapshotFiles, message: string | undefined): Promise<Omit<MachineSnapshot, 'pausedMs'>> {
  const memory = await storeFilePieces(store, files.ram)
  const disk = await storeFilePieces(store, files.disk)
  const devices = readFileSync(files.devices)
  const layer: MachineLayer = {
    kind: 'machine',
    schemaVersion: 1,
    image: record.image,
    memoryMiB: record.launch.memoryMiB,
    memory: memory.digest,
    devices: await store.writeBlob(devices),
    disk: disk.digest,
    diskBytes: disk.size,
    qemuVersion: await qemuVersion(),
    accelerator: record.accelerator,
  }
  const layerId = await store.writeBlob(canonicalBytes(layer))
  const parent = record.head ?? record.from
  const snapshotImage = makeSnapshot({
    parents: parent ? [parent] : [],
    tree: await store.writeBlob(canonicalBytes(EMPTY_TREE)),
    message: message ?? `machine ${record.id}`,
    agent: 'forkpoint machine',
    layers: { machine: layerId },
  })
  const image = await store.writeBlob(canonicalBytes(snapshotImage))
  await store.sync()
  await updateRef({ store, name: machineRef(record.id), id: image, expected: record.head, message: `machine snapshot ${record.id}` })
  writeRecord(store, { ...record, head: image })
  return { image, layer: layerId, newBytes: memory.newBytes + disk.newBytes, memoryBytes: memory.size, diskBytes: disk.size, devicesBytes: devices.length }
}

/**
 * Start `n` children from a snapshot image, in parallel: each maps the snapshot's RAM
 * copy-on-write (`share=off`), has a qcow2 overlay of its own over the snapshot's disk,
 * loads the device state and continues; its first command sets the clock and reseeds its
 * random generator (a child holds its parent's). A child that fails takes the others down.
 */
async function fork(o: ForkOptions): Promise<MachineInfo[]> {
  const { store } = await openStore(o)
  const n = wholeNumber(o.n, 'n', 1, MAX_FORK)
  const snap = await readSnapshot(store, o.image)
  if (!snap.machine) throw new UsageError(`image ${o.image} has no machine layer: take one with forkpoint machine snapshot`, { value: o.image })
  const layer = await readMachineLayer(store, snap.machine)
  const [version, { accelerator }] = await Promise.all([qemuVersion(), chooseAccelerator()])
  if (layer.qemuVersion !== version)
    throw new UsageError(`the machine was saved by QEMU ${layer.qemuVersion}; this is QEMU ${version}, which cannot load its device state`, { value: layer.qemuVersion })
  if (layer.accelerator !== accelerator)
    throw new UsageError(`the machine was saved running on ${layer.accelerator}; machines here run on ${accelerator}`, { value: layer.accelerator })
  const saved = await snapshotFiles(store, snap.machine, layer)
  const started = await Promise.allSettled(Array.from({ length: n }, () => startChild(store, o, layer, saved, accelerator)))
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected')
  if (failed) {
    for (const s of started) if (s.status === 'fulfilled') await killRecord(store, s.value.id)
    throw failed.reason
  }
  return started.map((s) => (s as PromiseFulfilledResult<MachineInfo>).value)
}

async function startChild(store: Store, o: ForkOptions, layer: MachineLayer, saved: SnapshotFiles, accelerator: MachineRecord['accelerator']): Promise<MachineInfo> {
  const id = newMachineId()
  const dir = machineDir(store, id)
  mkdirSync(dir, { recursive: true })
  try {
    const disk = join(dir, 'disk.qcow2')
    await runTool('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', saved.disk, '-F', 'raw', disk])
    const launch = { boot: null, memoryMiB: layer.memoryMiB, ram: { path: saved.ram, share: false }, disk, sockets: sockets(id), console: join(dir, 'console.log'), accelerator }
    const detached = o.detached ?? false
    const record: MachineRecord = { id, pid: -1, image: layer.image, accelerator, launch, from: o.image, head: null, detached, cgroups: [], createdAt: new Date().toISOString() }
    writeRecord(store, record)
    const child = await startIncoming(launch, saved.devices, { machine: id, log: join(dir, 'qemu.log'), detached, stateWithoutRam: true })
    record.pid = child.pid ?? -1
    writeRecord(store, record)
    record.cgroups = await limitMachine(record.pid, layer.memoryMiB)
    writeRecord(store, record)
    await withQmp(launch.sockets.qmp, id, (qmp) => qmp.execute('cont'))
    const fresh = await withAgent(record, (agent) =>
      deadline(agent.exec(freshStart()), FRESH_DEADLINE_MS, `machine ${id}: its first command did not answer within ${FRESH_DEADLINE_MS / 1000} s`),
    )
    if (fresh.exitCode !== 0) throw new MachineError(`machine ${id}: setting its clock and reseeding its random generator failed: ${fresh.stderr}`, { machine: id })
    return info(record)
  } catch (err) {
    await killRecord(store, id)
    throw err
  }
}

/** A child's first command: the host's time (the guest's clock stopped at the snapshot) and a seed of its own, taken in now. */
function freshStart(): string {
  return `date -s @${Math.floor(Date.now() / 1000)} >/dev/null && echo ${randomBytes(32).toString('hex')} > /dev/urandom && /bin/reseed`
}

async function kill(o: MachineRef): Promise<void> {
  const { store } = await openStore(o)
  await killRecord(store, readRecord(store, o.machine).id)
}

/** SIGKILL the machine's QEMU, wait until it is gone, and remove its folder (its snapshots stay in the store). */
async function killRecord(store: Store, id: string): Promise<void> {
  let record: MachineRecord
  try {
    record = readRecord(store, id)
  } catch {
    rmSync(machineDir(store, id), { recursive: true, force: true })
    return
  }
  if (record.pid > 0 && isRunning(record)) {
    process.kill(record.pid, 'SIGKILL')
    for (let wait = 1; isRunning(record); wait = Math.min(wait * 2, 50)) await new Promise((resolve) => setTimeout(resolve, wait))
  }
  await releaseLimits(record.cgroups)
  removeRecord(store, record)
}

async function stats(o: MachineRef): Promise<MachineStats> {
  const record = await runningRecord(o)
  const rollup = readFileSync(`/proc/${record.pid}/smaps_rollup`, 'utf8')
  const kB = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? 0) * 1024
  return { pid: record.pid, rssBytes: kB('Rss'), pssBytes: kB('Pss'), privateDirtyBytes: kB('Private_Dirty') }
}

async function runningRecord(o: MachineRef): Promise<MachineRecord> {
  const { store } = await openStore(o)
  const record = readRecord(store, o.machine)
  if (!isRunning(record))
    throw new MachineError(`machine ${o.machine} is not running (its QEMU ${record.pid} is gone): forkpoint machine kill ${o.machine} removes it`, { machine: o.machine })
  return record
}

async function withAgent<T>(record: MachineRecord, use: (agent: GuestAgent) => Promise<T>): Promise<T> {
  const agent = await GuestAgent.connect(record.launch.sockets.agent, record.id)
  try {
    return await use(agent)
  } finally {
    agent.close()
  }
}

function info(r: MachineRecord): MachineInfo {
  return {
    id: r.id,
    pid: r.pid,
    running: isRunning(r),
    image: r.image,
    accelerator: r.accelerator,
    memoryMiB: r.launch.memoryMiB,
    from: r.from,
    head: r.head,
    detached: r.detached,
    limited: r.cgroups.length > 0,
    createdAt: r.createdAt,
  }
}

function deadline<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new MachineError(message, {})), ms)))
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}

const sockets = (id: string) => ({ qmp: join(socketDir(id), 'qmp.sock'), agent: join(socketDir(id), 'agent.sock') })

function wholeNumber(value: number, option: string, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new UsageError(`${option} must be a whole number from ${min} to ${max}, not ${value}`, { option, value })
  return value
}
