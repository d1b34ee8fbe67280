import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { MachineError, UsageError } from '../../errors/index.js'
import { openStore } from '../../store/findStore.js'
import { deleteRef } from '../../store/refs.js'
import type { Store } from '../../store/Store.js'
import type { MachineInfo, MachineRef, MachineStats } from '../MachineBackend.js'
import { isAlive } from '../../sandbox/processId.js'
import type { MachineState } from '../MachineBackend.js'
import {
  findQemu,
  killAndWait,
  liveRef,
  type MachineRecord,
  machineDir,
  namingSocket,
  qemuProcesses,
  readRecord,
  removeRecord,
  makeSocketDir,
  socketDirOf,
  writeRecord,
} from '../machineRecords.js'
import { withQmp } from './qemuSteps.js'
import { type Watched, watched } from './watchdog.js'
import { GuestAgent } from './GuestAgent.js'
import type { ExecResult, GuestChannel } from './GuestChannel.js'
import { QemuGuestAgent } from './QemuGuestAgent.js'
import { releaseLimits } from './machineLimits.js'
import { dropOutbox } from '../../effects/outbox.js'
import { machineOutbox } from '../net/machineNet.js'

/** A machine's QEMU process as its record knows it: found running, talked to, described, killed. */

/**
 * A machine to talk to: its start completed and its QEMU runs. A machine a snapshot left
 * paused (the snapshotting process was killed) is let go on first.
 */
export async function runningRecord(store: Store, machine: string): Promise<MachineRecord> {
  const record = readRecord(store, machine)
  const state = machineState(record)
  if (state === 'starting' || state === 'incomplete')
    throw new MachineError(
      `machine ${machine} is ${state === 'starting' ? 'still starting' : 'incomplete (what started it was killed)'}: forkpoint machine kill ${machine} removes it`,
      {
        machine,
      },
    )
  if (state !== 'running' && state !== 'paused')
    throw new MachineError(`machine ${machine} is not running (its QEMU is gone): forkpoint machine rm ${machine} removes it`, { machine })
  if (state === 'paused') return resume(store, record)
  return record
}

async function resume(store: Store, record: MachineRecord): Promise<MachineRecord> {
  await withQmp(record.launch.sockets.qmp, record.id, (qmp) => qmp.execute('cont'))
  const { pausedBy: _resumed, ...going } = record
  writeRecord(store, going)
  return going
}

/** Where a machine is in its life, from its record and the processes alive now. */
export function machineState(r: MachineRecord, qemu: number | null = findQemu(r)): MachineState {
  if (r.failure !== undefined) return 'failed'
  if (r.starting) return isAlive(r.starting) ? 'starting' : 'incomplete'
  if (qemu === null) return 'gone'
  return r.pausedBy && !isAlive(r.pausedBy) ? 'paused' : 'running'
}

/** The running machine's agent for `use`: each script `run` runs is watched (a guest that stops ends it with QEMU's reason). */
export async function withRunningAgent<T>(o: MachineRef, use: (run: (script: string) => Promise<ExecResult>) => Promise<T>): Promise<T> {
  const record = await runningRecord((await openStore(o)).store, o.machine)
  return withAgent(record, (agent) => use((script) => watched(watchOf(record), agent.exec(script))))
}

export async function withAgent<T>(record: MachineRecord, use: (agent: GuestChannel) => Promise<T>): Promise<T> {
  const { agent: path } = record.launch.sockets
  const agent: GuestChannel = record.agent === 'qemu-ga' ? await QemuGuestAgent.connect(path, record.id) : await GuestAgent.connect(path, record.id)
  try {
    return await use(agent)
  } finally {
    agent.close()
  }
}

export function info(r: MachineRecord): MachineInfo {
  const qemu = findQemu(r) // one look through /proc where the pid is stale, not three
  return {
    id: r.id,
    pid: qemu ?? r.pid,
    running: qemu !== null,
    state: machineState(r, qemu),
    image: r.image,
    accelerator: r.accelerator,
    memoryMiB: r.launch.memoryMiB,
    from: r.from,
    head: r.head,
    detached: r.detached,
    limited: r.cgroups.length > 0,
    createdAt: r.createdAt,
    failure: r.failure ?? null,
    expiresAt: r.expiresAt ?? null,
  }
}

/** What the watchdog needs of a machine's record. */
export const watchOf = (r: MachineRecord): Watched => ({
  machine: r.id,
  pid: r.pid,
  qmp: r.launch.sockets.qmp,
  log: join(dirname(r.launch.console), 'qemu.log'),
  console: r.launch.console,
  accelerator: r.accelerator,
})

export function deadline<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new MachineError(message, {})), ms)))
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}

/** A new machine's sockets, in a directory made for them. */
export function sockets(id: string): { qmp: string; agent: string } {
  const dir = makeSocketDir(id)
  return { qmp: join(dir, 'qmp.sock'), agent: join(dir, 'agent.sock') }
}

export function wholeNumber(value: number, option: string, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new UsageError(`${option} must be a whole number from ${min} to ${max}, not ${value}`, { option, value })
  return value
}

/** What is kept of a machine that failed: its record, saying why, and its console and QEMU logs. */
const KEPT_OF_FAILED = new Set(['machine.json', 'console.log', 'qemu.log'])

/**
 * SIGKILL the machine's QEMU, wait until it is gone, and remove its folder (its snapshots
 * stay in the store). With `keepLogs`, a failed machine's record (saying why) and logs stay
 * until `machine rm`, and everything else of it goes.
 */
export async function killRecord(store: Store, id: string, failed?: { keepLogs: boolean; failure: string }): Promise<void> {
  let record: MachineRecord
  try {
    record = readRecord(store, id)
  } catch {
    rmSync(machineDir(store, id), { recursive: true, force: true })
    await deleteRef(store, liveRef(id))
    return
  }
  await killAndWait(qemuProcesses(namingSocket(record), { launchers: true }))
  await dropOutbox({ store, branchId: machineOutbox(id).id, env: process.env }) // the backend's calls carry no environment: the key is this process's
  await releaseLimits(record.cgroups)
  await deleteRef(store, liveRef(id))
  if (!failed?.keepLogs) return removeRecord(store, record)
  const dir = machineDir(store, id)
  for (const name of readdirSync(dir)) if (!KEPT_OF_FAILED.has(name)) rmSync(join(dir, name), { recursive: true, force: true })
  rmSync(socketDirOf(id), { recursive: true, force: true })
  writeRecord(store, { ...record, failure: `${failed.failure.split('\n')[0]} (logs in ${dir} until machine rm)` })
}

/** The machine's memory as the host counts it, from /proc/PID/smaps_rollup. */
export async function machineMemory(o: MachineRef): Promise<MachineStats> {
  const record = await runningRecord((await openStore(o)).store, o.machine)
  const rollup = readFileSync(`/proc/${record.pid}/smaps_rollup`, 'utf8')
  const kB = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? 0) * 1024
  return { pid: record.pid, rssBytes: kB('Rss'), pssBytes: kB('Pss'), privateDirtyBytes: kB('Private_Dirty') }
}
