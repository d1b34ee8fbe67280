import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MachineNotFoundError } from '../errors/index.js'
import type { Digest } from '../store/digest.js'
import type { Store } from '../store/Store.js'
import { atomicWriteSync } from '../util/atomicWrite.js'
import type { GuestAgentKind } from './qemu/GuestChannel.js'
import type { Accelerator, QemuLaunch } from './qemu/qemuArgs.js'

/** A machine of a store, running or gone: what `machine ls`, `exec`, `snapshot` and `kill` find it by. */
export interface MachineRecord {
  id: string
  pid: number
  /** The machine image it runs. */
  image: Digest
  accelerator: Accelerator
  /** What answers on its agent socket. */
  agent: GuestAgentKind
  launch: QemuLaunch
  /** The snapshot image it was forked or restored from; null for a machine booted cold. */
  from: Digest | null
  /** Its latest snapshot image; the next one's parent. */
  head: Digest | null
  detached: boolean
  /** The cgroups limiting its memory and pids (none where this host lets us make none). */
  cgroups: string[]
  createdAt: string
  /** Why it failed, for a machine whose start or fork failed: its console and QEMU logs are kept beside the record until `machine rm`. */
  failure?: string
}

/**
 * While a machine lives, `refs/machines/<id>` names what it started from (its machine
 * image, or the snapshot image it was forked from), so gc keeps what its next snapshot
 * will name. Its snapshots are on `refs/heads/machines/<id>` and stay after it.
 */
export const liveRef = (id: string) => `refs/machines/${id}`

/** `<store>/machines`: a folder a machine (its disk, console, log), and `.images` and `.snapshots`, the files QEMU reads, written out of the store once each. */
export const machinesDir = (store: Store) => join(store.root, 'machines')
export const machineDir = (store: Store, id: string) => join(machinesDir(store), id)

/** Unix socket paths are limited to 107 bytes, so the sockets live in a short folder of the user's. */
export function socketDir(id: string): string {
  const dir = join(tmpdir(), `fp-machines-${process.getuid?.() ?? 0}`, id)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  return dir
}

export function newMachineId(): string {
  return `m${randomBytes(4).toString('hex')}`
}

export function writeRecord(store: Store, record: MachineRecord): void {
  atomicWriteSync(join(machineDir(store, record.id), 'machine.json'), [Buffer.from(JSON.stringify(record, null, 2) + '\n')])
}

export function readRecord(store: Store, id: string): MachineRecord {
  const path = join(machineDir(store, id), 'machine.json')
  if (!/^m[0-9a-f]{8}$/.test(id) || !existsSync(path)) throw new MachineNotFoundError(`no machine ${id} in this store (forkpoint machine ls)`, { machine: id })
  const record = JSON.parse(readFileSync(path, 'utf8')) as Omit<MachineRecord, 'agent'> & { agent?: GuestAgentKind }
  return { ...record, agent: record.agent ?? 'forkpoint' } // a record written before qemu-ga guests names no agent: ours
}

export function listRecords(store: Store): MachineRecord[] {
  const dir = machinesDir(store)
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter((name) => /^m[0-9a-f]{8}$/.test(name) && existsSync(join(dir, name, 'machine.json')))
    .map((id) => readRecord(store, id))
}

export function removeRecord(store: Store, record: MachineRecord): void {
  rmSync(machineDir(store, record.id), { recursive: true, force: true })
  rmSync(socketDir(record.id), { recursive: true, force: true })
}

/**
 * Whether the machine's QEMU runs: its pid is alive (not a zombie, which `kill -0` still
 * finds) and is the QEMU of this machine (a pid is reused), known by its QMP socket.
 */
export function isRunning(record: MachineRecord): boolean {
  if (hasExited(record.pid)) return false
  try {
    return readFileSync(`/proc/${record.pid}/cmdline`, 'utf8').includes(record.launch.sockets.qmp)
  } catch {
    return false
  }
}

/**
 * Whether a process this machine's kill signalled has finished exiting: gone, or a zombie
 * (whose pid no other process can have until it is reaped). Not `isRunning`: an exiting
 * process's command line reads empty once its memory is released, while the process is
 * still there, freeing the rest.
 */
export function hasExited(pid: number): boolean {
  try {
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))
  } catch {
    return true
  }
}
