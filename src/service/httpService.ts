import { recoverUnsent } from '../effects/sendUnsent.js'
import { promises as fs } from 'node:fs'
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http'
import { type AddressInfo, connect } from 'node:net'
import { resolve as resolvePath } from 'node:path'
import { ForkpointError, InternalError, UsageError } from '../errors/index.js'
import { ExitCode } from '../errors/ForkpointError.js'
import { type StoreLocator, openStore } from '../store/findStore.js'
import { packageVersion } from '../util/ownPackage.js'
import { openApiDocument } from './openApi.js'
import { type AnyOperation, offeredOn } from '../operations/operation.js'
import { serviceErrorJson } from '../operations/operationWords.js'
import { runOperation } from '../operations/runOperation.js'
import { OPERATIONS, findOperation } from '../operations/table.js'
import { type ServiceAddress, defaultSocket, parseListen } from './serviceAddress.js'
import { CLAUDE_HOOK_PATH, MAX_HOOK_REQUEST, WORKSPACE_HEADER } from './serviceNames.js'
import { WarmWorld } from './warmWorld.js'
import { SECURITY_HEADERS, isWebAsset, sendWebAsset } from './webAssets.js'
import { type Guard, refusal } from './guardRequest.js'
import { listenerHosts, listenerOrigins } from './listenerNames.js'
import type { RequestPolicy } from '../operations/requestPolicy.js'
import { newServiceToken, writeServiceToken } from './serviceToken.js'
import { newImageCache, type ImageCache } from '../image/imageGraph.js'
import { type WorldScanner, fullScanner } from '../world/scan/snapshotWorkspace.js'
import type { Store } from '../store/Store.js'

/** A request body is one JSON document of arguments. */
const MAX_BODY = 16 * 1024 * 1024

export interface ServeArgs extends StoreLocator {
  /** `unix:PATH` or `HOST:PORT` (default: the Unix socket `<store>/service.sock`). */
  listen?: string
  /**
   * TCP: the bearer token every request must carry (default: a new random one). Either is
   * written to `<store>/service-token`, mode 0600, for the store's owner's clients, and
   * removed when the service closes. A Unix socket needs none: only its owner can connect.
   */
  token?: string
  /** Directories outside the workspace whose files requests may name (a run artifact to replay or diff, a `file://` remote). */
  allowPaths?: string[]
  /** `oci://HOST/REPO` and `s3://BUCKET/PREFIX` remotes (and what lies beneath) that push and pull may use; none by default. */
  allowRemotes?: string[]
  /** The environment operations get (keys, what a sandboxed run inherits): the edge that starts the service passes it; default none. */
  env?: NodeJS.ProcessEnv
  /** Keep the workspace warm with a file watcher (default true). */
  watch?: boolean
  /**
   * With the watcher: a workspace of at most this many files is scanned in full at each
   * snapshot rather than from the watcher's list, which waits out the watcher's 50 ms batch
   * (default `SCAN_IN_FULL_UP_TO`, 15,000); 0 takes the list whenever it is trusted.
   */
  scanInFullUpTo?: number
  /**
   * Serve only what reads (the web view and its `GET /v1/view/…` queries, health, the
   * OpenAPI document): every operation is refused. `forkpoint ui` serves so. On TCP its
   * token is not written to the store (a `serve` of the same store keeps its own there):
   * the web view's URL carries it (`RunningService.token`).
   */
  readOnly?: boolean
  /**
   * The Claude Code hook's work (`answerClaudeHook`, src/adapters/claudeCode/answerHook.ts),
   * answering `POST /v1/claude/hook`: `forkpoint serve` passes it. Without it that path is
   * 404 and the hook's client does the work in its own process.
   */
  claudeHook?: ClaudeHookAnswerer
}

/** Where the service does a Claude Code hook's work: its store and workspace, scanned by its watcher (in full without one). */
export interface ServedWorkspace {
  store: Store
  workspace: string
  scanner: WorldScanner
}

/** A Claude Code hook's request (its input and environment) answered in `at`: the outcome, or null when it is not this workspace's (421). */
export type ClaudeHookAnswerer = (request: unknown, at: ServedWorkspace) => Promise<object | null>

export interface RunningService {
  /** `unix:/path` or `http://host:port`. */
  address: string
  /** The bearer token every request but the web view's own files carries (TCP), or null (a Unix socket). */
  token: string | null
  /** Where the bearer token is written (TCP), or null (a Unix socket, the read-only web view). */
  tokenFile: string | null
  /** The store's directory (`.forkpoint`). */
  storeRoot: string
  world: WarmWorld | null
  /** What the start did with committed effects a crash left unsent (one line), or null when none waited. */
  recovered: string | null
  close(): Promise<void>
}

/** The web view's address on a running service, on `route` (`#/runs`, …): with the token it needs on TCP. */
export function webViewUrl(service: Pick<RunningService, 'address' | 'token'>, route = ''): string {
  return `${service.address}/ui/${service.token === null ? '' : `?token=${service.token}`}${route}`
}

const STATUS: Record<number, number> = { [ExitCode.usage]: 400, [ExitCode.conflict]: 409, [ExitCode.offline]: 403, [ExitCode.corrupt]: 422, [ExitCode.difference]: 422 }

/**
 * `forkpoint serve`: the CLI's operations as JSON endpoints (`POST /v1/<operation>`, an
 * OpenAPI document at `/openapi.json`) for one store, on a Unix socket in the store by
 * default. Snapshots use the warm workspace (`WarmWorld`). Long operations stream
 * progress as server-sent events when asked; a client that goes away cancels its
 * operation (a sandboxed run is killed) and the service serves on. On TCP every request
 * carries the bearer token and names the listener itself as its Host; a request from a
 * page elsewhere (a foreign Origin) and a POST not declared JSON are refused (guardRequest).
 * Files and remotes a request names are confined (requestPolicy). `POST /v1/claude/hook`
 * answers a Claude Code hook in this workspace (`ServeArgs.claudeHook`).
 * @throws {UsageError} a socket another service answers on
 */
export async function startService(args: ServeArgs = {}, table: readonly AnyOperation[] = OPERATIONS): Promise<RunningService> {
  const { store, workspace } = await openStore(args)
  const where: StoreLocator = { dir: workspace, store }
  const env = args.env ?? {}
  const recovered = await recoverUnsent({ store, env })
  const address: ServiceAddress = args.listen ? parseListen(args.listen) : { kind: 'unix', path: defaultSocket(store) }
  const readOnly = args.readOnly ?? false
  const token = address.kind === 'tcp' ? (args.token ?? newServiceToken()) : null
  if (address.kind === 'unix') await claimSocket(address.path)
  const world = args.watch === false ? null : await WarmWorld.start(store, workspace, { scanInFullUpTo: args.scanInFullUpTo })
  const version = packageVersion()
  const policy: RequestPolicy = { workspace, store: store.root, allowPaths: (args.allowPaths ?? []).map((p) => resolvePath(p)), allowRemotes: args.allowRemotes ?? [] }
  const guard: Guard = { hosts: null, origins: null, token }
  const hookWorkspace: ServedWorkspace = { store, workspace, scanner: world?.scanner ?? fullScanner }
  const claudeHook = args.claudeHook ?? null
  const context: Context = { where, table, env, world, guard, policy, version, address: '', served: 0, cache: newImageCache(), readOnly, hookWorkspace, claudeHook }
  const server = createServer((req, res) => {
    handle(req, res, context).catch((err: unknown) => sendError(res, err))
  })
  const url = await listen(server, address).catch(async (err: unknown) => {
    await world?.close()
    throw err
  })
  context.address = url
  if (address.kind === 'tcp') {
    guard.hosts = listenerHosts(address.host, Number(new URL(url).port))
    guard.origins = listenerOrigins(guard.hosts)
  }
  const tokenFile = token === null || readOnly ? null : await writeServiceToken(store.root, token)
  return {
    address: url,
    token,
    tokenFile,
    storeRoot: store.root,
    world,
    recovered,
    close: async () => {
      if (tokenFile) await fs.rm(tokenFile, { force: true })
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
  /** the operations it serves */
  table: readonly AnyOperation[]
  /** the environment it was started with, for the operations */
  env: NodeJS.ProcessEnv
  world: WarmWorld | null
  guard: Guard
  policy: RequestPolicy
  version: string
  /** Where it listens (`http://host:port` or `unix:/path`), once it does. */
  address: string
  /** Operations answered so far (health says it: how a client knows its calls reach this service). */
  served: number
  /** Snapshots and tree sizes the views have read: immutable, so kept for the service's life. */
  cache: ImageCache
  /** Where a Claude Code hook works: this store and workspace, scanned by the watcher when there is one. */
  hookWorkspace: ServedWorkspace
  claudeHook: ClaudeHookAnswerer | null
  readOnly: boolean
}

async function handle(req: IncomingMessage, res: ServerResponse, ctx: Context): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://service')
  const path = url.pathname
  const asset = req.method === 'GET' && isWebAsset(path)
  const refused = refusal(req, ctx.guard, { public: asset })
  if (refused) return sendJson(res, refused.status, refused.error.toJSON(), refused.headers)
  if (asset) return sendWebAsset(res, path, url.search)
  const query = served(ctx.table, /^\/v1\/view\/([a-z]+)$/.exec(path)?.[1], { query: true })
  if (req.method === 'GET' && query)
    return sendJson(
      res,
      200,
      await runOperation(query, ctx.where, Object.fromEntries(url.searchParams), { signal: new AbortController().signal, policy: ctx.policy, env: ctx.env, cache: ctx.cache }),
    )
  if (req.method === 'GET' && path === '/openapi.json')
    return sendJson(res, 200, openApiDocument(ctx.version, { address: ctx.address, bearer: ctx.guard.token !== null }, ctx.table))
  if (req.method === 'GET' && path === '/v1/health')
    return sendJson(res, 200, { ok: true, version: ctx.version, workspace: ctx.where.dir, served: ctx.served, scan: ctx.world === null ? 'full' : (ctx.world.lost ?? 'warm') })
  const hook = req.method === 'POST' && path === CLAUDE_HOOK_PATH && ctx.claudeHook !== null
  const op = served(ctx.table, /^\/v1\/([a-z_]+)$/.exec(path)?.[1])
  if (!hook && (req.method !== 'POST' || !op)) return sendJson(res, 404, new UsageError(`no such endpoint: ${req.method ?? ''} ${path} (${endpoints(ctx.table)})`).toJSON())
  const name = op?.name ?? 'the Claude Code hook'
  if (ctx.readOnly) return sendJson(res, 405, new UsageError(`this service is read-only (the web view's): ${name} is refused`, { field: name }).toJSON())
  const caller = req.headers[WORKSPACE_HEADER]
  if (typeof caller === 'string' && decodeURIComponent(caller) !== ctx.where.dir) {
    return sendJson(res, 421, new UsageError(`this service keeps the workspace ${String(ctx.where.dir)}, not ${decodeURIComponent(caller)}`).toJSON())
  }
  if (!op) return answerHook(req, res, ctx, ctx.claudeHook!)
  const args = await readJson(req)
  ctx.served++
  const abort = new AbortController()
  res.on('close', () => res.writableFinished || abort.abort()) // the client went away before its answer
  const run = (onProgress?: (progress: object) => void) =>
    runOperation(op, ctx.where, args, { signal: abort.signal, policy: ctx.policy, env: ctx.env, scanner: ctx.world?.scanner, onProgress })
  if (!(req.headers.accept ?? '').includes('text/event-stream')) return sendJson(res, 200, await run())
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' })
  const event = (type: string, data: unknown) => res.writableEnded || res.destroyed || res.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`)
  try {
    event('result', await run((progress) => event('progress', progress)))
  } catch (err) {
    event('error', serviceErrorJson(asForkpointError(err)).error)
  }
  res.end()
}

/**
 * A Claude Code hook (`ServeArgs.claudeHook`): its outcome, or its failure as the hook in its
 * own process says it (the error's own message, not in the operations' words), or 421
 * when its directory is not this service's workspace.
 */
async function answerHook(req: IncomingMessage, res: ServerResponse, ctx: Context, claudeHook: ClaudeHookAnswerer): Promise<void> {
  const body = await readJson(req, MAX_HOOK_REQUEST)
  ctx.served++
  try {
    const outcome = await claudeHook(body, ctx.hookWorkspace)
    if (outcome === null) return sendJson(res, 421, new UsageError(`this service keeps the workspace ${ctx.hookWorkspace.workspace}: the hook's directory is elsewhere`).toJSON())
    sendJson(res, 200, outcome)
  } catch (err) {
    const error = asForkpointError(err)
    sendJson(res, STATUS[error.exitCode] ?? 500, { error: { ...error.toJSON().error, message: err instanceof Error ? err.message : String(err) } })
  }
}

/** The operation (or, with `query`, the web view's query) a path names, when the service offers it. */
function served(table: readonly AnyOperation[], name: string | undefined, { query = false } = {}) {
  const op = name === undefined ? undefined : findOperation(table, name, { query })
  return op && offeredOn(op, 'http') ? op : undefined
}

/** What a 404 lists: every endpoint the service has. */
function endpoints(table: readonly AnyOperation[]): string {
  const names = (query: boolean) => table.filter((op) => (op.query === true) === query && offeredOn(op, 'http')).map((op) => op.name)
  return [`POST /v1/<operation>: ${names(false).join(', ')}`, `GET /v1/view/<view>: ${names(true).join(', ')}`, `POST ${CLAUDE_HOOK_PATH}`, 'GET /openapi.json'].join('; ')
}

async function readJson(req: IncomingMessage, max = MAX_BODY): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > max) throw new UsageError(`a request body is at most ${max} bytes`)
    chunks.push(chunk)
  }
  const text = Buffer.concat(chunks).toString('utf8').trim()
  if (text === '') return {}
  try {
    return JSON.parse(text)
  } catch {
    throw new UsageError("the request body must be JSON, the operation's arguments")
  }
}

function asForkpointError(err: unknown): ForkpointError<object> {
  return err instanceof ForkpointError ? (err as ForkpointError<object>) : new InternalError(`internal error: ${(err as Error)?.message ?? String(err)}`, { cause: String(err) })
}

function sendError(res: ServerResponse, err: unknown): void {
  const error = asForkpointError(err)
  if (res.headersSent) return void res.destroy()
  sendJson(res, STATUS[error.exitCode] ?? 500, serviceErrorJson(error))
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return
  res.writeHead(status, { 'content-type': 'application/json', ...SECURITY_HEADERS, ...headers })
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
    if (address.kind === 'tcp') return void server.listen(address.port, address.host, resolve)
    // the socket is made 0600 as it is bound (the bind is synchronous): no other user connects in between
    const umask = process.umask(0o177)
    try {
      server.listen(address.path, resolve)
    } finally {
      process.umask(umask)
    }
  })
  if (address.kind === 'unix') {
    await fs.chmod(address.path, 0o600) // the workspace's owner only, as the store itself
    return `unix:${address.path}`
  }
  const bound = server.address() as AddressInfo
  return `http://${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`
}
