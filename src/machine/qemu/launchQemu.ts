import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs'
import { MachineError, MachineUnavailableError } from '../../errors/index.js'
import { pollUntil } from '../../util/pollUntil.js'
import { qemuProcesses } from '../machineRecords.js'
import { QEMU_BINARY, type QemuLaunch, qemuArgs } from './qemuArgs.js'
import { launcherScript } from './timeToLive.js'

export interface LaunchOptions {
  /** Outlive the caller (`forkpoint machine start`); otherwise QEMU gets SIGKILL when the caller goes, however it goes. */
  detached: boolean
  /** QEMU's own messages go here, for the report of a failed start. */
  log: string
  machine: string
  /** A time to live in seconds: the launcher kills QEMU that long after `startClock`; none when null or absent. */
  ttlSeconds?: number | null
}

/** A QEMU started: the process forkpoint spawned (its exit is QEMU's) and QEMU's own pid. */
export interface LaunchedQemu {
  child: ChildProcess
  pid: number
}

/**
 * Start QEMU in network, PID and mount namespaces of its own (and, unprivileged, a user
 * namespace mapping the caller to itself); a guest has only loopback. The first process
 * of the PID namespace is a shell that starts QEMU and waits for it, so `unshare` exits
 * with QEMU's status, and when that shell dies the kernel kills QEMU. Tied to the
 * caller, `setpriv --pdeathsig KILL` makes the kernel kill `unshare` when the thread that
 * spawned it exits (Node spawns from its main thread), and `--kill-child` the shell with
 * it: QEMU's own death signal would not hold, as the kernel clears it when root's QEMU
 * gives up root (`-runas`). With a time to live, the shell also keeps its clock
 * (`launcherScript`). Resolves once QEMU's pid is known.
 */
export async function launchQemu(launch: QemuLaunch, o: LaunchOptions): Promise<LaunchedQemu> {
  const user = process.getuid?.() === 0 ? [] : ['--user', '--map-current-user']
  const isolate = ['unshare', ...user, '--net', '--mount', '--pid', '--fork', '--kill-child', '--']
  const tie = o.detached ? [] : ['setpriv', '--pdeathsig', 'KILL', '--']
  const argv = [...tie, ...isolate, 'sh', '-c', launcherScript(o.ttlSeconds ?? null), 'sh', QEMU_BINARY, ...qemuArgs(launch)]
  const child = spawnWithDisk(argv, launch.disk, o)
  return { child, pid: await qemuPid(child, launch.sockets.qmp, o) }
}

/** QEMU's pid, once it runs: the process whose command line is QEMU's with this QMP socket. */
function qemuPid(child: ChildProcess, qmp: string, o: Pick<LaunchOptions, 'log' | 'machine'>): Promise<number> {
  return pollUntil(() => {
    const [pid] = qemuProcesses((cmdline) => cmdline.startsWith(QEMU_BINARY) && cmdline.includes(`${qmp},`))
    if (pid !== undefined) return pid
    if (child.exitCode !== null || child.signalCode !== null) throw qemuFailed(child, o)
    return undefined
  })
}

/** Spawn `argv` with QEMU's log as stdout and stderr and the disk's descriptors at DISK_FDS. */
function spawnWithDisk(argv: string[], disk: string, o: LaunchOptions): ChildProcess {
  const fds: number[] = []
  try {
    for (const [path, flags] of [
      [o.log, 'a'],
      [disk, 'r+'],
      [disk, 'r'],
    ] as const)
      fds.push(openSync(path, flags))
    const [log, readWrite, readOnly] = fds
    // the disk's descriptors land at DISK_FDS, the places after stdin, stdout and stderr
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', log, log, readWrite, readOnly], detached: o.detached })
    child.on('error', () => undefined) // reported by waitForSocket from the log and the exit
    child.unref() // a caller may end without killing its machines: tied ones die with it, detached ones live on
    return child
  } finally {
    for (const fd of fds) closeSync(fd)
  }
}

/**
 * Wait for QEMU to listen on a socket it was told to. The file appears at bind(), a
 * moment before listen(), and a connect between the two is refused, so what is watched
 * is the kernel's list of QEMU's unix sockets (in its network namespace) for that path
 * with the listening flag. No deadline: QEMU either listens or exits, and an exit is
 * reported with what it wrote to its log.
 */
export async function waitForSocket(child: ChildProcess, socket: string, o: Pick<LaunchOptions, 'log' | 'machine'>): Promise<void> {
  await pollUntil(() => {
    if (listensOn(child.pid, socket)) return true
    if (child.exitCode !== null || child.signalCode !== null) throw qemuFailed(child, o)
    return undefined
  })
}

/** `__SO_ACCEPTCON` in /proc/net/unix's Flags column: the socket listens. */
const LISTENING = 0x10000

function listensOn(pid: number | undefined, socket: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/net/unix`, 'utf8')
      .split('\n')
      .some((line) => line.endsWith(` ${socket}`) && (parseInt(line.trim().split(/\s+/)[3] ?? '0', 16) & LISTENING) !== 0)
  } catch {
    return false // not started yet, or gone: the exit check says which
  }
}

export function qemuFailed(child: ChildProcess, o: Pick<LaunchOptions, 'log' | 'machine'>): Error {
  const stderr = existsSync(o.log) ? readFileSync(o.log, 'utf8').trim().slice(-2000) : ''
  if (/unshare|setpriv|qemu-system-x86_64/.test(stderr) && /No such file|not found/.test(stderr))
    return new MachineUnavailableError(`cannot start QEMU: ${stderr}`, { tool: QEMU_BINARY, hint: 'apt-get install qemu-system-x86 qemu-utils' })
  return new MachineError(`machine ${o.machine}: QEMU exited (${child.exitCode ?? child.signalCode}): ${stderr || 'no message'}`, { machine: o.machine, stderr })
}
