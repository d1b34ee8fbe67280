import { timingSafeEqual } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http'
import { type AddressInfo, connect } from 'node:net'
import { ForkpointError, InternalError, UsageError } from '../errors/index.js'
import { ExitCode } from '../errors/ForkpointError.js'
import { type StoreLocator, openStore } from '../store/findStore.js'
import { packageVersion } from '../util/ownPackage.js'
import { openApiDocument } from './openApi.js'
import { OPERATION_NAMES, type OperationName, runOperation } from './operations.js'
import { type ServiceAddress, WORKSPACE_HEADER, defaultSocket, parseListen } from './serviceAddress.js'
import { type ViewName, VIEW_NAMES, runView } from './views.js'
import { WarmWorld } from './warmWorld.js'
import { SECURITY_HEADERS, isWebAsset, sendWebAsset } from './webAssets.js'
import { newImageCache, type ImageCache } from '../image/imageGraph.js'

/** A request body is one JSON document of arguments. */
const MAX_BODY = 16 * 1024 * 1024

export interface ServeArgs extends StoreLocator {
  /** `unix:PATH` or `HOST:PORT` (default: the Unix socket `<store>/service.sock`). */
  listen?: string
  /** Bearer token every request must carry; required on any address but a socket or loopback. */
  token?: string
  /** Keep the workspace warm with a file watcher (default true). */
  watch?: boolean
  /**
   * Serve only what reads (the web view and its `GET /v1/view/…` queries, health, the
   * OpenAPI document): every operation is refused, and on TCP a request must name this
   * service's own loopback address as its Host, so that no web page can reach it through
   * a name of its own (DNS rebinding). `forkpoint ui` serves so.
   */
  readOnly?: boolean
}

export interface RunningService {
  /** `unix:/path` or `http://host:port`. */
  address: string
  world: WarmWorld | null
  close(): Promise<void>
}

const STATUS: Record<number, number> = { [ExitCode.usage]: 400, [ExitCode.conflict]: 409, [ExitCode.offline]: 403, [ExitCode.corrupt]: 422, [ExitCode.difference]: 422 }

/**
 * `forkpoint serve`: the CLI's operations as JSON endpoints (`POST /v1/<operation>`, an
 * OpenAPI document at `/openapi.json`) for one store, on a Unix socket in the store by
 * default. Snapshots use the warm workspace (`WarmWorld`). Long operations stream
 * progress as server-sent events when asked; a client that goes away cancels its
 * operation (a sandboxed run is killed) and the service serves on.
 * @throws {UsageError} a non-loopback address without a token; a socket another service answers on
 */
export async function startService(args: ServeArgs = {}): Promise<RunningService> {
  const { store, workspace } = await openStore(args)
  const where: StoreLocator = { dir: workspace, store }
  const address: ServiceAddress = args.listen ? parseListen(args.listen) : { kind: 'unix', path: defaultSocket(store) }
  if (address.kind === 'tcp' && !address.loopback && !args.token) {
    throw new UsageError(
      `listening on ${address.host}:${address.port} needs --token (or FORKPOINT_SERVICE_TOKEN): anyone who reaches that address could run commands in this workspace`,
      {
        option: '--listen',
      },
    )
  }
  if (address.kind === 'unix') await claimSocket(address.path)
  const world = args.watch === false ? null : await WarmWorld.start(store, workspace)
  const version = packageVersion()
  const context: Context = { where, world, token: args.token ?? null, version, served: 0, cache: newImageCache(), readOnly: args.readOnly ?? false, hosts: null }
  const server = createServer((req, res) => {
    handle(req, res, context).catch((err: unknown) => sendError(res, err))
  })
  const url = await listen(server, address).catch(async (err: unknown) => {
    await world?.close()
    throw err
  })
  if (context.readOnly && address.kind === 'tcp') context.hosts = loopbackHosts(new URL(url).port)
  return {
    address: url,
    world,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
      await world?.close()
      if (address.kind === 'unix') await fs.rm(address.path, { force: true })
    },
  }
}

interface Context {
  where: StoreLocator
  world: WarmWorld | null
  token: string | null
  version: string
  /** Operations answered so far (health says it: how a client knows its calls reach this service). */
  served: number
  /** Snapshots and tree sizes the views have read: immutable, so kept for the service's life. */
  cache: ImageCache
  readOnly: boolean
  /** Read-only on TCP: the Host headers a request may carry. */
  hosts: Set<string> | null
}

function loopbackHosts(port: string): Set<string> {
  return new Set(['127.0.0.1', 'localhost', '[::1]'].map((host) => `${host}:${port}`))
}

async function handle(req: IncomingMessage, res: ServerResponse, ctx: Context): Promise<void> {
  if (ctx.token !== null && !authorized(req.headers.authorization, ctx.token)) {
    res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' })
    res.end(JSON.stringify(new UsageError('this service needs its bearer token: Authorization: Bearer <token>').toJSON()))
    return
  }
  if (ctx.hosts !== null && !ctx.hosts.has(req.headers.host ?? '')) {
    return sendJson(res, 421, new UsageError(`this service answers only as ${[...ctx.hosts].join(' or ')}, not ${req.headers.host ?? 'no host'}`).toJSON())
  }
  const url = new URL(req.url ?? '/', 'http://service')
  const path = url.pathname
  if (req.method === 'GET' && isWebAsset(path)) return sendWebAsset(res, path)
  const view = /^\/v1\/view\/([a-z]+)$/.exec(path)?.[1]
  if (req.method === 'GET' && view !== undefined && (VIEW_NAMES as string[]).includes(view))
    return sendJson(res, 200, await runView(view as ViewName, ctx.where, url.searchParams, { cache: ctx.cache }))
  if (req.method === 'GET' && path === '/openapi.json') return sendJson(res, 200, openApiDocument(ctx.version, { bearer: ctx.token !== null }))
  if (req.method === 'GET' && path === '/v1/health')
    return sendJson(res, 200, { ok: true, version: ctx.version, workspace: ctx.where.dir, served: ctx.served, scan: ctx.world === null ? 'full' : (ctx.world.lost ?? 'warm') })
  const name = /^\/v1\/([a-z]+)$/.exec(path)?.[1]
  if (req.method !== 'POST' || !name || !(OPERATION_NAMES as string[]).includes(name)) {
    return sendJson(
      res,
      404,
      new UsageError(
        `no such endpoint: ${req.method ?? ''} ${path} (POST /v1/<operation>: ${OPERATION_NAMES.join(', ')}; GET /v1/view/<view>: ${VIEW_NAMES.join(', ')}; GET /openapi.json)`,
      ).toJSON(),
    )
  }
  if (ctx.readOnly) return sendJson(res, 405, new UsageError(`this service is read-only (the web view's): ${name} is refused`, { field: name }).toJSON())
  const caller = req.headers[WORKSPACE_HEADER]
  if (typeof caller === 'string' && decodeURIComponent(caller) !== ctx.where.dir) {
    return sendJson(res, 421, new UsageError(`this service keeps the workspace ${String(ctx.where.dir)}, not ${decodeURIComponent(caller)}`).toJSON())
  }
  const args = await readJson(req)
  ctx.served++
  const abort = new AbortController()
  res.on('close', () => res.writableFinished || abort.abort()) // the client went away before its answer
  const run = (onProgress?: (progress: object) => void) => runOperation(name as OperationName, ctx.where, args, { signal: abort.signal, scanner: ctx.world?.scanner, onProgress })
  if (!(req.headers.accept ?? '').includes('text/event-stream')) return sendJson(res, 200, await run())
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' })
  const event = (type: string, data: unknown) => res.writableEnded || res.destroyed || res.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`)
  try {
    event('result', await run((progress) => event('progress', progress)))
  } catch (err) {
    event('error', asForkpointError(err).toJSON().error)
  }
  res.end()
}

function authorized(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header ?? '')
  const expected = Buffer.from(`Bearer ${token}`)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_BODY) throw new UsageError(`a request body is at most ${MAX_BODY} bytes`)
    chunks.push(chunk)
  }
  const text = Buffer.concat(chunks).toString('utf8').trim()
  if (text === '') return {}
  try {
    return JSON.parse(text)
  } catch {
    throw new UsageError(`the request body must be JSON, the operation's arguments (got ${JSON.stringify(text.slice(0, 60))})`)
  }
}

function asForkpointError(err: unknown): ForkpointError<object> {
  return err instanceof ForkpointError ? (err as ForkpointError<object>) : new InternalError(`internal error: ${(err as Error)?.message ?? String(err)}`, { cause: String(err) })
}

function sendError(res: ServerResponse, err: unknown): void {
  const error = asForkpointError(err)
  if (res.headersSent) return void res.destroy()
  sendJson(res, STATUS[error.exitCode] ?? 500, error.toJSON())
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return
  res.writeHead(status, { 'content-type': 'application/json', ...SECURITY_HEADERS })
  res.end(JSON.stringify(body))
}

/** Take the socket path: refuse it while another service answers there, else clear what a dead one left. */
async function claimSocket(path: string): Promise<void> {
  const answered = await new Promise<boolean>((resolve) => {
    const probe = connect(path)
    probe.once('connect', () => {
      probe.destroy()
      resolve(true)
    })
    probe.once('error', () => resolve(false))
  })
  if (answered) throw new UsageError(`a service already answers on ${path}; stop it first`, { name: path })
  await fs.rm(path, { force: true })
}

/** Refusals of the address itself (in use, not this machine's, a privileged port): the caller's to change, so exit 2. */
const ADDRESS_REFUSALS: Record<string, string> = { EADDRINUSE: 'is in use', EADDRNOTAVAIL: 'is not an address of this machine', EACCES: 'is not open to this user' }

async function listen(server: Server, address: ServiceAddress): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const refusal = ADDRESS_REFUSALS[err.code ?? '']
      const shown = address.kind === 'unix' ? address.path : `${address.host}:${address.port}`
      reject(refusal ? new UsageError(`--listen ${shown}: the address ${refusal} (${err.code})`, { option: '--listen', value: shown }) : err)
    })
    if (address.kind === 'unix') server.listen(address.path, resolve)
    else server.listen(address.port, address.host, resolve)
  })
  if (address.kind === 'unix') {
    await fs.chmod(address.path, 0o600) // the workspace's owner only, as the store itself
    return `unix:${address.path}`
  }
  const bound = server.address() as AddressInfo
  return `http://${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`
}
