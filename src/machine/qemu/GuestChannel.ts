import type { Socket } from 'node:net'
import { CorruptDataError, MachineError } from '../../errors/index.js'
import { connectUnix } from './connectUnix.js'

/** What a command run in a guest gave back. */
export interface ExecResult {
  exitCode: number
  stdout: string
  stderr: string
}

/**
 * The host's end of a guest's agent, over the machine's agent socket: our own agent in a
 * busybox guest (GuestAgent), qemu-guest-agent in a guest with a Debian root filesystem
 * (QemuGuestAgent). One connection at a time is QEMU's rule for a socket chardev, so a
 * caller connects, runs what it has and closes.
 */
export interface GuestChannel {
  /** Resolves once the guest's agent answers: until then, the guest is not listening. */
  waitForHello(): Promise<void>
  /** Run a shell script in the guest (stdin empty) and wait for its exit code and output. */
  exec(script: string): Promise<ExecResult>
  close(): void
}

/**
 * The longest line a guest's agent may send: an answer carries a command's whole output,
 * and a guest is not trusted to end its lines. A longer one ends the connection
 * (CorruptDataError, exit 5) instead of growing the host's memory without bound.
 */
export const MAX_AGENT_LINE_BYTES = 64 * 2 ** 20

export function agentLineTooLong(machine: string): CorruptDataError {
  return new CorruptDataError(`machine ${machine}: its guest agent sent over ${MAX_AGENT_LINE_BYTES / 2 ** 20} MiB without ending a line: a command's output is capped at that`, {})
}

/** Which agent a guest runs: an image with a root filesystem runs qemu-guest-agent. */
export type GuestAgentKind = 'forkpoint' | 'qemu-ga'

export const guestAgentFor = (hasRootfs: boolean): GuestAgentKind => (hasRootfs ? 'qemu-ga' : 'forkpoint')

/** A machine's agent socket, connected; `fail` hears once why it closed or broke. */
export async function agentSocket(path: string, machine: string, agent: string, fail: (err: MachineError) => void): Promise<Socket> {
  const socket = await connectUnix(path).catch((err: unknown) => {
    throw new MachineError(`machine ${machine}: cannot reach its guest agent at ${path}: ${(err as Error).message}`, { machine, path }, { cause: err })
  })
  socket.on('close', () => fail(new MachineError(`machine ${machine}: the guest agent's socket closed`, { machine })))
  socket.on('error', (err) => fail(new MachineError(`machine ${machine}: ${agent}: ${err.message}`, { machine }, { cause: err })))
  return socket
}
