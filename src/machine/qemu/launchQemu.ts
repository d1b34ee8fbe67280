import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs'
import { MachineError, MachineUnavailableError } from '../../errors/index.js'
import { pollUntil } from '../../util/pollUntil.js'
import { QEMU_BINARY } from './qemuArgs.js'

export interface LaunchOptions {
  /** Outlive the caller (`forkpoint machine start`); otherwise QEMU gets SIGKILL when the caller goes, however it goes. */
  detached: boolean
  /** QEMU's own messages go here, for the report of a failed start. */
  log: string
  machine: string
}

/**
 * Start QEMU in a network namespace of its own (no network device either: a guest has
 * only loopback). `unshare` and `setpriv` exec in place, so the pid returned is QEMU's.
 * Unprivileged, the namespace comes with a user namespace mapping the caller to itself.
 * Tied to the caller, `setpriv --pdeathsig KILL` makes the kernel kill QEMU when the
 * thread that spawned it exits (Node spawns from its main thread).
 */
export function launchQemu(args: string[], o: LaunchOptions): ChildProcess {
  const isolate = process.getuid?.() === 0 ? ['unshare', '--net', '--'] : ['unshare', '--user', '--map-current-user', '--net', '--']
  const tie = o.detached ? [] : ['setpriv', '--pdeathsig', 'KILL', '--']
  const argv = [...isolate, ...tie, QEMU_BINARY, ...args]
  const log = openSync(o.log, 'a')
  try {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', log, log], detached: o.detached })
    child.on('error', () => undefined) // reported by waitForSocket from the log and the exit
    child.unref() // a caller may end without killing its machines: tied ones die with it, detached ones live on
    return child
  } finally {
    closeSync(log)
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
