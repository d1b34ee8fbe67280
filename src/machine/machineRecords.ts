import { randomBytes } from 'node:crypto'
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { MachineNotFoundError, UsageError } from '../errors/index.js'
import type { Digest } from '../objects/digest.js'
import type { Store } from '../store/Store.js'
import { atomicWriteSync } from '../util/atomicWrite.js'
import { errnoCode } from '../util/fsx.js'
import { pollUntil } from '../util/pollUntil.js'
import { type ProcessId, self } from '../sandbox/processId.js'
import { checkedRecord } from './checkedRecord.js'
import type { GuestAgentKind } from './qemu/GuestChannel.js'
import type { Accelerator } from '../objects/MachineLayer.js'
import type { QemuLaunch } from './qemu/qemuArgs.js'
import { qemuUser } from './qemu/qemuUser.js'
import { NET_HOST_ENTRY } from './net/machineNet.js'
import { readStateTextOrNull } from '../store/readStateFile.js'

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
  /** The process starting it, until its start or fork completes: once that process is gone, the machine is incomplete (`machine gc` reaps it). */
  starting?: ProcessId
  /** When its time to live ends (ISO 8601), set once its start completes: its launcher kills its QEMU then. */
  expiresAt?: string
  /** The process that paused it for a snapshot, until it lets it go on: once that process is gone, the next command resumes the machine. */
  pausedBy?: ProcessId
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
/** Where a machine's sockets live: a unix socket path is limited to 107 bytes, and a store can be deep. */
export const socketDirOf = (id: string): string => join(tmpdir(), `fp-machines-${process.getuid?.() ?? 0}`, id)

/**
 * Make a machine's sockets' directory, 0700, and return it. Root's is its QEMU user's
 * (`qemuUser`), who binds the incoming state's socket there after it has dropped root, so
 * the directory above it lets that user through (0711, nothing listed) and must be root's
 * own (refused, exit 2, when another user made it first).
 */
export function makeSocketDir(id: string): string {
  const dir = socketDirOf(id)
  const parent = dirname(dir)
  mkdirSync(parent, { recursive: true, mode: 0o700 })
  const owner = lstatSync(parent)
  if (!owner.isDirectory() || owner.uid !== (process.getuid?.() ?? 0))
    throw new UsageError(`${parent} is not this user's own directory (another user made it first): remove it`, { path: parent })
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const user = qemuUser()
  if (user) {
    chmodSync(parent, 0o711)
    chownSync(dir, user.uid, user.gid)
  }
  return dir
}

export function newMachineId(): string {
  return `m${randomBytes(4).toString('hex')}`
}

/** The record of a machine about to start: no QEMU yet, no cgroups, this process starting it. */
export function startingRecord(r: Pick<MachineRecord, 'id' | 'image' | 'launch' | 'agent' | 'from' | 'detached'>): MachineRecord {
  return { ...r, pid: -1, accelerator: r.launch.accelerator, head: null, cgroups: [], createdAt: new Date().toISOString(), starting: self }
}

/** The record of a machine whose start completed, written down. */
export function started(store: Store, record: MachineRecord): MachineRecord {
  const { starting: _done, ...running } = record
  writeRecord(store, running)
  return running
}

/**
 * A new machine's folder, holding its record from the first instant: made under a temp
 * name with the record inside and renamed into place, so a folder without a record is
 * never ours to keep (`machine gc` removes one).
 */
export function createRecord(store: Store, record: MachineRecord): void {
  mkdirSync(machinesDir(store), { recursive: true })
  const tmp = mkdtempSync(join(machinesDir(store), `.${record.id}-`))
  atomicWriteSync(join(tmp, 'machine.json'), [recordBytes(record)])
  renameSync(tmp, machineDir(store, record.id))
}

export function writeRecord(store: Store, record: MachineRecord): void {
  atomicWriteSync(join(machineDir(store, record.id), 'machine.json'), [recordBytes(record)])
}

const recordBytes = (record: MachineRecord) => Buffer.from(JSON.stringify(record, null, 2) + '\n')

export const MACHINE_ID = /^m[0-9a-f]{8}$/

/** A machine's record, refused (exit 5) where it names a path other than the ones its id and the store give: a planted record must not steer a kill, a mount or a removal. */
export function readRecord(store: Store, id: string): MachineRecord {
  const path = join(machineDir(store, id), 'machine.json')
  if (!MACHINE_ID.test(id) || !existsSync(path)) throw new MachineNotFoundError(`no machine ${id} in this store (forkpoint machine ls)`, { machine: id })
  return checkedRecord(store, id, readStateTextOrNull(path) ?? '')
}

export function listRecords(store: Store): MachineRecord[] {
  const dir = machinesDir(store)
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter((name) => MACHINE_ID.test(name) && existsSync(join(dir, name, 'machine.json')))
    .map((id) => readRecord(store, id))
}

export function removeRecord(store: Store, record: MachineRecord): void {
  rmSync(machineDir(store, record.id), { recursive: true, force: true })
  rmSync(socketDirOf(record.id), { recursive: true, force: true })
}

/**
 * The pid of the machine's QEMU, or null where none runs. The record's pid, where that
 * process is alive and is this machine's QEMU (a pid is reused), known by its QMP socket on
 * its command line; else any QEMU whose command line names that socket: one started by a
 * process killed before it could write the pid down.
 */
export function findQemu(record: MachineRecord): number | null {
  if (record.pid > 0 && namesSocket(record.pid, record.launch.sockets.qmp)) return record.pid
  return qemuProcesses(namingSocket(record))[0] ?? null
}

/** A test of a command line: it names the machine's QMP socket. */
export const namingSocket =
  (record: MachineRecord) =>
  (cmdline: string): boolean =>
    cmdline.includes(`${record.launch.sockets.qmp},`)

function namesSocket(pid: number, socket: string): boolean {
  if (hasExited(pid)) return false
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`${socket},`)
  } catch {
    return false
  }
}

/**
 * Live QEMU processes of this user whose command line passes `test`; with `launchers`,
 * also the `unshare`s that start QEMUs in namespaces of their own (`launchQemu`), and the
 * host sides of machines' networks above them (`net/netHost.ts`, whose ledger saves end
 * before the machine's outbox is dropped): killing
 * one kills its QEMU too, and under load it may not have started QEMU yet, so a sweep
 * kills them; only a QEMU makes a machine running.
 */
export function qemuProcesses(test: (cmdline: string) => boolean, { launchers = false } = {}): number[] {
  const pids: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8')
      const launcher = cmdline.startsWith('unshare\0') || cmdline.includes(`${NET_HOST_ENTRY}\0`)
      const kind = cmdline.startsWith('qemu-system') || (launchers && launcher && cmdline.includes('\0qemu-system'))
      if (kind && test(cmdline) && !hasExited(Number(name))) pids.push(Number(name))
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids
}

/** SIGKILL each of `pids` and wait until all have exited; one already gone (a QEMU's launcher exits with it) is fine. */
export async function killAndWait(pids: readonly number[]): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch (err) {
      if (errnoCode(err) !== 'ESRCH') throw err
    }
  }
  await pollUntil(() => (pids.every(hasExited) ? true : undefined))
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
