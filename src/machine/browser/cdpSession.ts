import type { Socket } from 'node:net'
import { CorruptDataError, MachineError } from '../../errors/index.js'
import { printable } from '../../trace/core/printable.js'
import { connectUnix } from '../qemu/connectUnix.js'

/** The largest frame the guest's relay may send: Chromium's messages are far smaller; a guest is not trusted to stay so. */
const MAX_FRAME_BYTES = 64 * 2 ** 20
/** The largest frame sent to the guest: the relay reads its port 64 KiB at a time. */
const CHUNK = 64 * 1024

/**
 * One connection to a browser machine's Chromium, through the machine's `cdp`
 * virtio-serial port and the guest's relay (`forkpoint-cdp relay`, browserGuest.ts): the
 * bytes of a TCP connection to the guest's DevTools port, in frames of a kind byte and a
 * 4-byte length. QEMU serves one client of the port at a time, so there is one session
 * at a time: a second waits for the socket.
 */
export class CdpSession {
  /** Bytes received and not yet handled, kept as they came: joined once per frame, not once per chunk. */
  private chunks: Buffer[] = []
  private buffered = 0
  private opened: ((err?: Error) => void) | null = null
  private dataListener: (bytes: Buffer) => void = () => undefined
  private closeListener: () => void = () => undefined
  private closed = false

  private constructor(
    private readonly socket: Socket,
    private readonly machine: string,
  ) {
    socket.on('data', (bytes: Buffer) => this.receive(bytes))
    socket.on('close', () => this.finish())
    socket.on('error', () => this.finish())
  }

  /** A session on the machine's CDP socket, once the guest's relay has connected to Chromium. */
  static async open(socketPath: string, machine: string): Promise<CdpSession> {
    const session = new CdpSession(await connectUnix(socketPath), machine)
    await new Promise<void>((resolve, reject) => {
      session.opened = (err) => (err ? reject(err) : resolve())
      session.frame('O')
    })
    return session
  }

  onData(listener: (bytes: Buffer) => void): void {
    this.dataListener = listener
  }

  /** Called once, when Chromium or the guest ends the session (or the machine stops). */
  onClose(listener: () => void): void {
    this.closeListener = listener
  }

  /** Send bytes to Chromium; false when the socket queues past its high-water mark: write more after `onceDrain`. */
  write(bytes: Buffer): boolean {
    let flowing = true
    for (let at = 0; at < bytes.length; at += CHUNK) flowing = this.frame('D', bytes.subarray(at, at + CHUNK))
    return flowing
  }

  /** Stop delivering the guest's bytes until `resume`: for a reader of `onData` slower than the guest. */
  pause(): void {
    this.socket.pause()
  }

  resume(): void {
    this.socket.resume()
  }

  /** Called once the bytes queued for the guest have drained. */
  onceDrain(listener: () => void): void {
    this.socket.once('drain', listener)
  }

  /** End the session: the relay closes its connection to Chromium. */
  close(): void {
    if (this.closed) return
    this.frame('C')
    this.socket.end()
    this.finish()
  }

  private frame(kind: string, payload: Uint8Array = new Uint8Array()): boolean {
    const head = Buffer.alloc(5)
    head.write(kind, 0, 'latin1')
    head.writeUInt32BE(payload.length, 1)
    return this.socket.write(Buffer.concat([head, payload]))
  }

  private receive(bytes: Buffer): void {
    this.chunks.push(bytes)
    this.buffered += bytes.length
    while (this.buffered >= 5) {
      const head = this.head()
      const length = head.readUInt32BE(1)
      if (length > MAX_FRAME_BYTES) return this.fail(new CorruptDataError(`machine ${this.machine}'s CDP relay sent a frame of ${length} bytes`, {}))
      if (this.buffered < 5 + length) return
      this.handle(String.fromCharCode(head[0]!), this.take(5 + length).subarray(5))
    }
  }

  /** The next frame's kind byte and length, copied from however many chunks hold them. */
  private head(): Buffer {
    const head = Buffer.alloc(5)
    let at = 0
    for (const chunk of this.chunks) {
      at += chunk.copy(head, at)
      if (at === head.length) break
    }
    return head
  }

  /** The first `count` buffered bytes as one buffer; the rest stay buffered. */
  private take(count: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered)
    this.chunks = all.length > count ? [all.subarray(count)] : []
    this.buffered -= count
    return all.subarray(0, count)
  }

  private handle(kind: string, payload: Buffer): void {
    if (kind === 'O') this.settleOpen()
    else if (kind === 'E')
      this.fail(new MachineError(`machine ${this.machine}'s Chromium refused the connection: ${printable(payload.toString('utf8').slice(0, 200))}`, { machine: this.machine }))
    else if (kind === 'D') this.dataListener(Buffer.from(payload))
    else if (kind === 'C') this.close()
    else if (kind !== 'R') this.fail(new CorruptDataError(`machine ${this.machine}'s CDP relay sent a frame of unknown kind ${JSON.stringify(kind)}`, {}))
  }

  private settleOpen(err?: Error): void {
    const opened = this.opened
    this.opened = null
    opened?.(err)
  }

  private fail(err: Error): void {
    this.settleOpen(err)
    this.socket.destroy()
    this.finish()
  }

  private finish(): void {
    this.settleOpen(new MachineError(`machine ${this.machine}'s CDP port closed before its relay answered (is it a browser machine?)`, { machine: this.machine }))
    if (this.closed) return
    this.closed = true
    this.closeListener()
  }
}
