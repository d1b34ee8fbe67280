import type { Socket } from 'node:net'
import { MachineError } from '../../errors/machineErrors.js'
import { connectUnix } from './connectUnix.js'

interface Pending {
  command: string
  resolve: (value: unknown) => void
  reject: (err: Error) => void
}

/**
 * A QEMU Machine Protocol connection: JSON lines over a unix socket. Commands go one at a
 * time and each answer is matched by its id; events QEMU sends on its own are not needed
 * here (every step polls the state it waits for) and are dropped.
 */
export class QmpClient {
  private buffer = ''
  private nextId = 0
  private readonly pending = new Map<string, Pending>()
  private closed: Error | null = null
  private greeted!: (ok: Error | null) => void
  private readonly greeting = new Promise<void>((resolve, reject) => (this.greeted = (err) => (err ? reject(err) : resolve())))

  private constructor(
    private readonly socket: Socket,
    private readonly machine: string,
  ) {
    socket.setEncoding('utf8')
    socket.on('data', (text: string) => this.receive(text))
    socket.on('close', () => this.fail(new MachineError(`machine ${machine}: QEMU closed its QMP socket`, { machine })))
    socket.on('error', (err) => this.fail(new MachineError(`machine ${machine}: QMP socket: ${err.message}`, { machine }, { cause: err })))
  }

  /** Connect to a QMP socket QEMU is listening on, read its greeting and leave negotiation mode. */
  static async connect(path: string, machine: string): Promise<QmpClient> {
    const socket = await connectUnix(path).catch((err: unknown) => {
      throw new MachineError(`machine ${machine}: cannot reach QMP at ${path}: ${(err as Error).message}`, { machine, path }, { cause: err })
    })
    const client = new QmpClient(socket, machine)
    await client.greeting
    await client.execute('qmp_capabilities')
    return client
  }

  /** Run a QMP command and return its `return` value; a QMP error is a MachineError naming its class. */
  execute<T = unknown>(command: string, args?: Record<string, unknown>): Promise<T> {
    if (this.closed) return Promise.reject(this.closed)
    const id = `fp-${this.nextId++}`
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { command, resolve: resolve as (v: unknown) => void, reject })
      this.socket.write(JSON.stringify(args ? { execute: command, arguments: args, id } : { execute: command, id }) + '\n')
    })
  }

  close(): void {
    this.socket.destroy()
  }

  private receive(text: string): void {
    this.buffer += text
    for (let end = this.buffer.indexOf('\n'); end >= 0; end = this.buffer.indexOf('\n')) {
      const line = this.buffer.slice(0, end).trim()
      this.buffer = this.buffer.slice(end + 1)
      if (!line) continue
      let message: Record<string, unknown>
      try {
        message = JSON.parse(line) as Record<string, unknown>
      } catch {
        this.fail(new MachineError(`machine ${this.machine}: QMP sent a line that is not JSON: ${line.slice(0, 200)}`, { machine: this.machine }))
        this.socket.destroy()
        return
      }
      this.message(message)
    }
  }

  private message(message: Record<string, unknown>): void {
    if ('QMP' in message) this.greeted(null)
    else if (!('event' in message)) {
      const id = String(message['id'])
      const waiting = this.pending.get(id)
      if (!waiting) return
      this.pending.delete(id)
      const error = message['error'] as { class?: string; desc?: string } | undefined
      if (error)
        waiting.reject(
          new MachineError(`machine ${this.machine}: QMP ${waiting.command}: ${error.desc ?? 'failed'}`, {
            machine: this.machine,
            command: waiting.command,
            qmpClass: error.class,
          }),
        )
      else waiting.resolve(message['return'])
    }
  }

  private fail(err: Error): void {
    if (this.closed) return
    this.closed = err
    this.greeted(err)
    for (const p of this.pending.values()) p.reject(err)
    this.pending.clear()
  }
}
