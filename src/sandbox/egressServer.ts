import { randomBytes, timingSafeEqual } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { type IncomingMessage, type ServerResponse, createServer as createHttpServer } from 'node:http'
import { type Server, type Socket, createServer, isIP } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Duplex } from 'node:stream'
import { TLSSocket } from 'node:tls'
import { isForkpointError } from '../errors/index.js'
import { failResponse } from '../util/failResponse.js'
import type { EgressProxy } from './runSandboxed.js'
import type { StoreCa } from './storeCa.js'

/** How the egress server answers one HTTP request from the sandbox, for `url` (scheme, host and path as the client meant them). */
export type RequestHandler = (url: string, req: IncomingMessage, res: ServerResponse) => Promise<void>

/** The proxy a sandbox's whole network leads to, and what it refused. */
export interface EgressServer {
  /** What `runSandboxed`'s `net` takes. */
  net: EgressProxy
  /** `ADDRESS:PORT` of each connection refused because it was neither HTTP nor TLS. */
  refused: string[]
  close(): Promise<void>
}

/** Where a connection from the sandbox was going, as its relay said. */
interface Destination {
  address: string
  port: number
}

const HEADER = /^forkpoint-egress (\S+) (\S+) (\d+)\n/
const HEADER_MAX = 256
const HTTP_REQUEST_START = /^[A-Z]{1,16} /
const TLS_HANDSHAKE = 0x16

/**
 * The egress proxy for sandboxes whose network must not reach anything unseen (an effects
 * policy, a recording): each connection the sandbox's relay hands over (the runtime's
 * egress, docs/effects.md) is HTTP, or TLS ended here with a certificate of the store's CA
 * for the name the client asked for; `answer` answers its requests. Anything else is
 * refused, never passed on.
 */
export async function startEgressServer({ answer, ca }: { answer: RequestHandler; ca: StoreCa }): Promise<EgressServer> {
  const dir = mkdtempSync(join(tmpdir(), 'fp-egress-'))
  const socket = join(dir, 'egress.sock')
  const refused: string[] = []
  const token = randomBytes(24).toString('hex')
  const destinations = new WeakMap<Duplex, Destination & { tls: boolean }>()
  const http = createHttpServer((req, res) => {
    const destination = destinations.get(req.socket)
    if (!destination) return failResponse(res, 502, new Error('forkpoint egress proxy: a request from nowhere'))
    answer(urlOf(req, destination), req, res).catch((err: unknown) => failResponse(res, isForkpointError(err) ? 409 : 502, err))
  })
  const accept = (client: Socket) => {
    client.on('error', () => undefined)
    takeHeader(client, token)
      .then(async ({ destination, first }) => {
        if (first[0] === TLS_HANDSHAKE) {
          const secure = new TLSSocket(withFirst(client, first), {
            isServer: true,
            ALPNProtocols: ['http/1.1'],
            SNICallback: (name, done) => void ca.contextFor(name).then((c) => done(null, c), done),
            secureContext: await ca.contextFor(destination.address),
          })
          secure.on('error', () => secure.destroy())
          destinations.set(secure, { ...destination, tls: true })
          http.emit('connection', secure)
        } else if (HTTP_REQUEST_START.test(first.toString('latin1', 0, 17))) {
          const plain = withFirst(client, first)
          destinations.set(plain, { ...destination, tls: false })
          http.emit('connection', plain)
        } else {
          refused.push(`${hostOf(destination)}:${destination.port}`)
          client.destroy()
        }
      })
      .catch(() => client.destroy())
  }
  const server = createServer(accept)
  await listen(server, socket)
  return {
    net: { socket, token, ca: ca.certPem },
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections()
        server.close(() => {
          rmSync(dir, { recursive: true, force: true })
          resolve()
        })
      }),
  }
}

/** A connection the egress proxy refused, in words. */
export function refusedWarning(to: string): string {
  return `a connection to ${to} was refused: it was neither HTTP nor TLS, which the egress proxy cannot read`
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(path, resolve)
  })
}

/** The relay's line naming the run's token and the destination, then the first bytes of the client's own; anyone without the token is refused. */
function takeHeader(client: Socket, token: string): Promise<{ destination: Destination; first: Buffer }> {
  return new Promise((resolve, reject) => {
    let seen = Buffer.alloc(0)
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk])
      const end = seen.indexOf(0x0a)
      if (end < 0 && seen.length < HEADER_MAX) return
      const match = HEADER.exec(seen.toString('latin1', 0, end + 1))
      if (!match || !sameSecret(match[1]!, token) || isIP(match[2]!) === 0) return done(new Error('not the relay'))
      const first = seen.subarray(end + 1)
      if (first.length === 0) return // the client has not spoken yet
      done(null, { destination: { address: match[2]!, port: Number(match[3]) }, first })
    }
    const onEnd = () => done(new Error('closed before it spoke'))
    const done = (err: Error | null, value?: { destination: Destination; first: Buffer }) => {
      client.off('data', onData).off('end', onEnd)
      client.pause()
      if (err) reject(err)
      else resolve(value!)
    }
    client.on('data', onData).on('end', onEnd)
  })
}

function sameSecret(given: string, token: string): boolean {
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * The client's stream as the HTTP server (or TLS) reads it: the bytes already taken to
 * classify it first, then the rest. A plain stream, not the socket, so that nothing reads
 * the socket's handle past the bytes taken.
 */
function withFirst(client: Socket, first: Buffer): Duplex {
  const stream = new Duplex({
    read: () => void client.resume(),
    write: (chunk: Buffer, _encoding, done) => void client.write(chunk, done),
    final: (done) => void client.end(done),
    destroy: (err, done) => {
      client.destroy()
      done(err)
    },
  })
  stream.push(first)
  client.on('data', (chunk: Buffer) => void (stream.push(chunk) || client.pause()))
  client.on('end', () => stream.push(null))
  client.on('close', () => stream.destroy())
  return stream
}

/** The URL the client asked for: by its Host (or TLS server name), else the address it connected to. */
function urlOf(req: IncomingMessage, destination: Destination & { tls: boolean }): string {
  const target = req.url ?? '/'
  if (/^https?:\/\//i.test(target)) return target
  const scheme = destination.tls ? 'https' : 'http'
  const servername = destination.tls ? (req.socket as TLSSocket).servername : undefined
  const host = req.headers.host ?? (servername ? `${servername}:${destination.port}` : `${hostOf(destination)}:${destination.port}`)
  return `${scheme}://${host}${target.startsWith('/') ? target : `/${target}`}`
}

function hostOf(destination: Destination): string {
  return isIP(destination.address) === 6 ? `[${destination.address}]` : destination.address
}
