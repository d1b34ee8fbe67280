import type { Socket } from 'node:net'
import { MachineError } from '../../errors/index.js'
import { pollUntil } from '../../util/pollUntil.js'
import { AgentLines } from './AgentLines.js'
import { type ExecResult, type GuestChannel, agentLineTooLong, agentSocket } from './GuestChannel.js'

/** How long a sync waits for its answer before it is sent again: qemu-ga drops nothing, but a guest still booting has no reader on the port yet, and its driver drops what comes meanwhile. */
const SYNC_RESEND_MS = 1000

interface GuestExecStatus {
  exited: boolean
  exitcode?: number
  signal?: number
  'out-data'?: string
  'err-data'?: string
}

type Waiter = { resolve: (value: unknown) => void; reject: (err: Error) => void }

/**
 * The host's end of qemu-guest-agent (the guest of an image with a Debian root
 * filesystem), QEMU's JSON protocol on the machine's agent socket. A connection first
 * syncs (`guest-sync-delimited`: its 0xFF resets qemu-ga's parser, in case an earlier host
 * left half a request), then a script runs as `guest-exec` of `/bin/sh -c`, polled with
 * `guest-exec-status` until it exits. Answers carry no id but come in order; a sync's
 * answer is its number, and a stale one (a resent sync's) is ignored.
 */
export class QemuGuestAgent implements GuestChannel {
  private readonly inOrder: Waiter[] = []
  private sync: { id: number; resolve: () => void } | null = null
  private synced: Promise<void> | null = null
  private closed: Error | null = null

  private constructor(
    private readonly socket: Socket,
    private readonly machine: string,
  ) {
    const lines = new AgentLines(
      (whole) => this.receive(whole),
      () => this.refuse(),
    )
    socket.on('data', (bytes: Buffer) => lines.push(bytes))
  }

  static async connect(path: string, machine: string): Promise<QemuGuestAgent> {
    const agent: QemuGuestAgent = new QemuGuestAgent(await agentSocket(path, machine, 'qemu-guest-agent', (err) => agent.fail(err)), machine)
    return agent
  }

  /** Resolves once qemu-ga answers a sync, sending it again each second until then. */
  waitForHello(): Promise<void> {
    this.synced ??= this.syncUntilAnswered()
    return this.synced
  }

  async exec(script: string): Promise<ExecResult> {
    await this.waitForHello()
    const { pid } = (await this.request('guest-exec', { path: '/bin/sh', arg: ['-c', script], 'input-data': '', 'capture-output': true })) as { pid: number }
    const status = await pollUntil(async () => {
      const s = (await this.request('guest-exec-status', { pid })) as GuestExecStatus
      return s.exited ? s : undefined
    })
    const text = (field: string | undefined) => (field ? Buffer.from(field, 'base64').toString('utf8') : '')
    return { exitCode: status.exitcode ?? 128 + (status.signal ?? 0), stdout: text(status['out-data']), stderr: text(status['err-data']) }
  }

  close(): void {
    this.socket.destroy()
  }

  private async syncUntilAnswered(): Promise<void> {
    for (let id = Math.floor(Math.random() * 1e9); ; id++) {
      if (this.closed) throw this.closed
      const answered = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), SYNC_RESEND_MS)
        this.sync = { id, resolve: () => (clearTimeout(timer), resolve(true)) }
      })
      this.socket.write(Buffer.concat([Buffer.from([0xff]), Buffer.from(JSON.stringify({ execute: 'guest-sync-delimited', arguments: { id } }) + '\n')]))
      if (await answered) return
    }
  }

  private request(command: string, args: object): Promise<unknown> {
    if (this.closed) return Promise.reject(this.closed)
    return new Promise((resolve, reject) => {
      this.inOrder.push({ resolve, reject })
      this.socket.write(JSON.stringify({ execute: command, arguments: args }) + '\n')
    })
  }

  private receive(whole: Buffer): void {
    let start = 0
    while (whole[start] === 0xff) start++ // the delimiter before a sync's answer
    const line = whole.subarray(start).toString('utf8').trim()
    if (line) this.answer(line)
  }

  private refuse(): void {
    this.fail(agentLineTooLong(this.machine))
    this.socket.destroy()
  }

  private answer(line: string): void {
    let message: { return?: unknown; error?: { desc?: string } }
    try {
      message = JSON.parse(line) as typeof message
    } catch {
      return // what a guest wrote before qemu-ga's first sync: not an answer
    }
    if (typeof message.return === 'number') {
      if (this.sync?.id === message.return) this.sync.resolve()
      return
    }
    const waiter = this.inOrder.shift()
    if (!waiter) return
    if (message.error) waiter.reject(new MachineError(`machine ${this.machine}: qemu-guest-agent: ${message.error.desc ?? 'error'}`, { machine: this.machine }))
    else waiter.resolve(message.return)
  }

  private fail(err: Error): void {
    if (this.closed) return
    this.closed = err
    for (const w of this.inOrder.splice(0)) w.reject(err)
  }
}
