import { randomBytes } from 'node:crypto'
import type { Socket } from 'node:net'
import { AgentLines } from './AgentLines.js'
import { type ExecResult, type GuestChannel, agentLineTooLong, agentSocket } from './GuestChannel.js'
import { printfEscaped } from './printfEscaped.js'

/** What a request carries as it is: printable ASCII but the backslash (escapes) and the space (the line's separator). */
const isPlain = (b: number) => b > 0x20 && b < 0x7f && b !== 0x5c

/**
 * The host's end of our busybox guest's agent (src/machine/image/guestScripts.ts): scripts
 * go as lines on the machine's agent socket, answers come back by id. Another
 * caller's connection waits its turn (connectUnix).
 */
export class GuestAgent implements GuestChannel {
  private readonly waiting = new Map<string, { resolve: (r: ExecResult) => void; reject: (e: Error) => void }>()
  private hello: { resolve: () => void; reject: (err: Error) => void } | null = null
  private helloSeen = false
  private closed: Error | null = null

  private constructor(
    private readonly socket: Socket,
    private readonly machine: string,
  ) {
    const lines = new AgentLines(
      (bytes) => this.receive(bytes.toString('utf8').replace(/\r$/, '')),
      () => this.refuse(),
    )
    socket.on('data', (bytes: Buffer) => lines.push(bytes))
  }

  static async connect(path: string, machine: string): Promise<GuestAgent> {
    const agent: GuestAgent = new GuestAgent(await agentSocket(path, machine, 'guest agent', (err) => agent.fail(err)), machine)
    return agent
  }

  /** The agent's first line after a boot. */
  waitForHello(): Promise<void> {
    if (this.helloSeen) return Promise.resolve()
    if (this.closed) return Promise.reject(this.closed)
    return new Promise<void>((resolve, reject) => (this.hello = { resolve, reject }))
  }

  /** Run a shell script in the guest with busybox sh. */
  exec(script: string): Promise<ExecResult> {
    if (this.closed) return Promise.reject(this.closed)
    const id = randomBytes(6).toString('hex') // unique across callers: an answer meant for a caller gone is ignored
    return new Promise<ExecResult>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject })
      this.socket.write(`${id} ${printfEscaped(Buffer.from(script), isPlain)}\n`)
    })
  }

  close(): void {
    this.socket.destroy()
  }

  private receive(line: string): void {
    if (line.startsWith('@@HELLO')) {
      this.helloSeen = true
      this.hello?.resolve()
    } else if (line.startsWith('@@R ')) this.answer(line.split(' '))
  }

  private answer([, id, code, out, err]: string[]): void {
    const waiter = this.waiting.get(id ?? '')
    if (!waiter) return
    this.waiting.delete(id!)
    const text = (field: string | undefined) => (field === undefined || field === '-' ? '' : Buffer.from(field, 'base64').toString('utf8'))
    waiter.resolve({ exitCode: Number(code), stdout: text(out), stderr: text(err) })
  }

  private refuse(): void {
    this.fail(agentLineTooLong(this.machine))
    this.socket.destroy()
  }

  private fail(err: Error): void {
    if (this.closed) return
    this.closed = err
    this.hello?.reject(err)
    for (const w of this.waiting.values()) w.reject(err)
    this.waiting.clear()
  }
}
