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

/** Which agent a guest runs: an image with a root filesystem runs qemu-guest-agent. */
export type GuestAgentKind = 'forkpoint' | 'qemu-ga'

export const guestAgentFor = (hasRootfs: boolean): GuestAgentKind => (hasRootfs ? 'qemu-ga' : 'forkpoint')
