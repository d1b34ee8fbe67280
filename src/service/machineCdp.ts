import { type IncomingMessage, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { CorruptDataError, MachineError, UsageError } from '../errors/index.js'
import { type Guard, refusal } from './guardRequest.js'
import { listenerHosts } from './listenerNames.js'
import { newServiceToken } from './serviceToken.js'
import { openStore } from '../store/findStore.js'
import type { MachineRef } from '../machine/MachineBackend.js'
import { cdpSocket } from '../machine/qemu/qemuArgs.js'
import { runningRecord } from '../machine/qemu/qemuProcess.js'
import { GUEST_CDP_PORT } from '../machine/browser/browserGuest.js'
import { CdpSession } from '../machine/browser/cdpSession.js'

/** The most of Chromium's `/json/version` answer read: a few hundred bytes in practice. */
const MAX_VERSION_BYTES = 1024 * 1024

export interface MachineCdpOptions extends MachineRef {
  /** The loopback port to listen on; 0 (the default) picks a free one. */
  port?: number
}

/** A browser machine's DevTools endpoint on the host's loopback. */
export interface MachineCdpEndpoint {
  /** `http://127.0.0.1:PORT`: what `chromium.connectOverCDP` takes, with the token's header; its `/json/version` names the browser's WebSocket. */
  url: string
  /** Every request carries `Authorization: Bearer <token>`. */
  token: string
  close(): Promise<void>
}

/**
 * Serve a browser machine's Chrome DevTools protocol on the host's 127.0.0.1 (never
 * another address): WebSocket connections and `GET /json/version`, each relayed through
 * the machine's `cdp` port to its Chromium, one connection at a time. CDP is full control
 * of the guest's browser, so the service's rules for a TCP listener hold: a bearer token
 * of 256 random bits on every request, the Host one of the listener's own names (DNS
 * rebinding), and no browser page's request (any Origin is refused).
 * @throws {UsageError} (exit 2) a machine that is not a browser machine
 */
export async function serveMachineCdp(o: MachineCdpOptions): Promise<MachineCdpEndpoint> {
  const record = await runningRecord((await openStore(o)).store, o.machine)
  if (!record.launch.cdp) throw new UsageError(`machine ${o.machine} has no CDP port: only machines of the browser recipe (machine build browser) have one`, { value: o.machine })
  const socketPath = cdpSocket(record.launch.sockets.qmp)
  const guard: Guard = { hosts: null, origins: new Set(), token: newServiceToken() }
  const server = createServer((req, res) => {
    answerHttp(req, res, guard, () => guestVersion(socketPath, o.machine)).catch((err: unknown) => sendJson(res, 502, { error: (err as Error).message }))
  })
  server.on('upgrade', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const refused = refusal(req, guard, { public: false })
    if (refused)
      return void client.end(`HTTP/1.1 ${refused.status} Refused\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${JSON.stringify(refused.error.toJSON())}`)
    relayUpgrade(req, client, head, socketPath, o.machine).catch(() => client.destroy())
  })
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(o.port ?? 0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  guard.hosts = listenerHosts('127.0.0.1', port)
  return {
    url: `http://127.0.0.1:${port}`,
    token: guard.token!,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

async function answerHttp(req: IncomingMessage, res: ServerResponse, guard: Guard, version: () => Promise<Record<string, unknown>>): Promise<void> {
  const refused = refusal(req, guard, { public: false })
  if (refused) return sendJson(res, refused.status, refused.error.toJSON(), refused.headers)
  if (req.method !== 'GET' || !['/json/version', '/json/version/'].includes(req.url ?? ''))
    return sendJson(res, 404, { error: 'this endpoint serves GET /json/version and the DevTools WebSockets' })
  const answer = await version()
  sendJson(res, 200, { ...answer, webSocketDebuggerUrl: hostWebSocketUrl(answer, req.headers.host!) })
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))
}

/** The guest's browser WebSocket, as the host serves it: the guest's path on the listener's address. */
function hostWebSocketUrl(version: Record<string, unknown>, host: string): string {
  const guest = version['webSocketDebuggerUrl']
  if (typeof guest !== 'string' || !/^ws:\/\/[^/]+\/devtools\/browser\/[\w-]+$/.test(guest))
    throw new CorruptDataError(`the guest's Chromium named its browser WebSocket ${JSON.stringify(guest)}`, {})
  return `ws://${host}${new URL(guest).pathname}`
}

/** The client's WebSocket handshake, sent on to the guest's Chromium as its own (no token; its own port as Host), then bytes both ways. */
async function relayUpgrade(req: IncomingMessage, client: Socket, head: Buffer, socketPath: string, machine: string): Promise<void> {
  const session = await CdpSession.open(socketPath, machine)
  const headers: string[] = []
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!
    if (!['authorization', 'host'].includes(name.toLowerCase())) headers.push(`${name}: ${req.rawHeaders[i + 1]}`)
  }
  session.write(Buffer.from(`${req.method} ${req.url} HTTP/1.1\r\nHost: 127.0.0.1:${GUEST_CDP_PORT}\r\n${headers.join('\r\n')}\r\n\r\n`, 'latin1'))
  if (head.length > 0) session.write(head)
  const towardClient = backpressure(
    () => session.pause(),
    () => session.resume(),
    (drained) => client.once('drain', drained),
  )
  const towardGuest = backpressure(
    () => client.pause(),
    () => client.resume(),
    (drained) => session.onceDrain(drained),
  )
  session.onData((bytes) => towardClient(client.write(bytes)))
  session.onClose(() => client.end())
  client.on('data', (bytes: Buffer) => towardGuest(session.write(bytes)))
  client.on('close', () => session.close())
  client.on('error', () => session.close())
}

/** Told each write's result: on false, stop reading the sending side until the receiving side drains, so neither queues without bound. */
function backpressure(pause: () => void, resume: () => void, onceDrained: (drained: () => void) => void): (flowing: boolean) => void {
  let paused = false
  return (flowing) => {
    if (flowing || paused) return
    paused = true
    pause()
    onceDrained(() => {
      paused = false
      resume()
    })
  }
}

/** Chromium's `/json/version`, asked through the relay: its HTTP answer read to its Content-Length. */
async function guestVersion(socketPath: string, machine: string): Promise<Record<string, unknown>> {
  const session = await CdpSession.open(socketPath, machine)
  const response = await new Promise<Buffer>((resolve, reject) => {
    let got = Buffer.alloc(0)
    session.onData((bytes) => {
      got = Buffer.concat([got, bytes])
      if (got.length > MAX_VERSION_BYTES) reject(new CorruptDataError(`machine ${machine}'s Chromium answered /json/version with over ${MAX_VERSION_BYTES} bytes`, {}))
      const end = got.indexOf('\r\n\r\n')
      const length = Number(/^content-length:\s*(\d+)/im.exec(got.subarray(0, Math.max(end, 0)).toString('latin1'))?.[1])
      if (end >= 0 && got.length >= end + 4 + length) resolve(got)
    })
    session.onClose(() => reject(new MachineError(`machine ${machine}'s Chromium closed the connection before it answered /json/version`, { machine })))
    session.write(Buffer.from(`GET /json/version HTTP/1.1\r\nHost: 127.0.0.1:${GUEST_CDP_PORT}\r\n\r\n`))
  }).finally(() => session.close())
  const body = response.subarray(response.indexOf('\r\n\r\n') + 4).toString('utf8')
  let parsed: unknown = null
  try {
    parsed = JSON.parse(body)
  } catch {
    // refused below
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new CorruptDataError(`machine ${machine}'s Chromium answered /json/version with something other than a JSON object`, {})
  return parsed as Record<string, unknown>
}
