import { readFileSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { openStore } from '../../store/findStore.js'
import { updateRef } from '../../store/refs.js'
import type { Store } from '../../store/Store.js'
import { canonicalBytes } from '../../util/canonicalJson.js'
import { makeSnapshot } from '../../objects/Snapshot.js'
import { EMPTY_TREE } from '../../world/tree/treeSource.js'
import { storeFilePieces } from '../filePieces.js'
import type { MachineRef, MachineSnapshot } from '../MachineBackend.js'
import type { MachineLayer } from '../../objects/MachineLayer.js'
import { filesIn, keepSnapshotFiles, type SnapshotFiles, stagingDir } from '../machineFiles.js'
import { type MachineRecord, newMachineId, socketDirOf, writeRecord } from '../machineRecords.js'
import { runTool } from '../runTool.js'
import { self } from '../../sandbox/processId.js'
import { qemuVersion } from './accelerator.js'
import type { QmpClient } from './QmpClient.js'
import { migrateToFile, startIncoming, withQmp } from './qemuSteps.js'
import { runningRecord, sockets } from './qemuProcess.js'

/** The ref of a machine's latest snapshot image: its snapshots and its children's form a tree `log --all --graph` draws. */
const machineRef = (id: string) => `refs/heads/machines/${id}`

/**
 * Pause the machine, save it, let it go on; then store what was saved as a machine layer
 * and an image whose parent is the machine's previous snapshot (or the one it was forked
 * from). A machine with RAM of its own (booted cold) is paused while its device state is
 * written and its RAM file and disk copied. A forked child maps its RAM privately, so
 * there is no file to copy: its whole state, RAM included, is written while it is paused,
 * and a second QEMU, never run, loads that into a RAM file and writes the device state
 * alone (docs/machine.md).
 */
export async function snapshotQemu(o: MachineRef & { message?: string }): Promise<MachineSnapshot> {
  const { store } = await openStore(o)
  const record = await runningRecord(store, o.machine)
  const staging = stagingDir(store)
  try {
    const files = filesIn(staging)
    const ownRam = record.launch.ram.share
    const pausedMs = await pausedWhile(store, record, async (qmp) => {
      await migrateToFile(qmp, ownRam ? files.devices : join(staging, 'whole'), ownRam, dirname(record.launch.sockets.qmp))
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

/** Pause the machine while `save` runs, its record naming this process meanwhile: if this process is killed, the next command lets the machine go on. */
async function pausedWhile(store: Store, record: MachineRecord, save: (qmp: QmpClient) => Promise<void>): Promise<number> {
  return withQmp(record.launch.sockets.qmp, record.id, async (qmp) => {
    writeRecord(store, { ...record, pausedBy: self })
    const start = performance.now()
    await qmp.execute('stop')
    try {
      await save(qmp)
    } finally {
      await qmp.execute('cont')
      writeRecord(store, record)
    }
    return performance.now() - start
  })
}

/** Load a whole state (RAM included) into a QEMU whose RAM is a file, and write its device state without the RAM. */
async function splitWholeState(record: MachineRecord, staging: string, files: SnapshotFiles): Promise<void> {
  const id = newMachineId()
  const overlay = join(staging, 'split.qcow2')
  await runTool('qemu-img', ['create', '-q', '-f', 'qcow2', '-b', files.disk, '-F', 'raw', overlay])
  const nic = record.launch.nic ? { open: false, guestPorts: [] } : null
  const launch = { ...record.launch, boot: null, ram: { path: files.ram, share: true }, disk: overlay, sockets: sockets(id), console: join(staging, 'split.log'), nic }
  const o = { machine: record.id, log: join(staging, 'split-qemu.log'), detached: false, stateWithoutRam: false }
  const { child } = await startIncoming(launch, join(staging, 'whole'), o)
  try {
    await withQmp(launch.sockets.qmp, record.id, (qmp) => migrateToFile(qmp, files.devices, true, dirname(launch.sockets.qmp)))
  } finally {
    child.kill('SIGKILL')
    rmSync(socketDirOf(id), { recursive: true, force: true })
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
    ...(record.launch.nic ? { nic: true as const } : {}),
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
