import { type IncomingMessage, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { isForkpointError } from '../../errors/index.js'
import { type HttpResponseData, describeRequest, recordedResponse, responseOutput } from './httpExchange.js'
import type { Session } from '../record/Session.js'

/** Where each proxy route forwards: the base URLs the agent would have used. */
export interface ProxyUpstreams {
  openai: string
  anthropic: string
}

export interface RecordingProxy {
  /** `http://127.0.0.1:PORT` (TCP) or null when listening on a unix socket. */
  url: string | null
  /** The variables that point an agent's SDKs at this proxy. */
  env: Record<string, string>
  close(): Promise<void>
}

export function defaultUpstreams(env: NodeJS.ProcessEnv = process.env): ProxyUpstreams {
  return {
    openai: env['OPENAI_BASE_URL'] ?? 'https://api.openai.com/v1',
    anthropic: env['ANTHROPIC_BASE_URL'] ?? 'https://api.anthropic.com',
  }
}

const DROPPED_UPSTREAM_HEADERS = new Set(['host', 'content-length', 'connection', 'accept-encoding', 'keep-alive', 'transfer-encoding'])

/**
 * A local HTTP proxy for agents in any language: `/openai/…` and `/anthropic/…` are
 * forwarded to the real APIs and recorded into `session` (the same steps in-process
 * capture makes, named by the upstream URL, not the proxy's), or served from the
 * recording during replay. Listens on 127.0.0.1 only, or on a unix socket (`socketPath`)
 * for agents inside a network namespace.
 */
export async function startRecordingProxy({ session, upstreams, socketPath }: { session: Session; upstreams: ProxyUpstreams; socketPath?: string }): Promise<RecordingProxy> {
  const server = createServer((req, res) => {
    handle(session, upstreams, req, res).catch((err: unknown) => fail(res, 502, 'forkpoint_proxy_error', (err as Error).message))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    if (socketPath) server.listen(socketPath, resolve)
    else server.listen(0, '127.0.0.1', resolve)
  })
  const url = socketPath ? null : `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    env: url ? proxyEnv(url) : {},
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** The variables that point OpenAI- and Anthropic-style SDKs at a proxy at `url`. */
export function proxyEnv(url: string): Record<string, string> {
  return { OPENAI_BASE_URL: `${url}/openai`, ANTHROPIC_BASE_URL: `${url}/anthropic`, OPENAI_API_BASE: `${url}/openai` }
}

async function handle(session: Session, upstreams: ProxyUpstreams, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const route = /^\/(openai|anthropic)(\/.*)?$/.exec(req.url ?? '')
  if (!route) return fail(res, 404, 'forkpoint_proxy_route', `forkpoint proxy serves /openai/… and /anthropic/… only, not ${req.url}`)
  const base = upstreams[route[1] as keyof ProxyUpstreams].replace(/\/+$/, '')
  const target = `${base}${route[2] ?? ''}`
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const headers = Object.fromEntries(Object.entries(req.headers).filter(([k, v]) => !DROPPED_UPSTREAM_HEADERS.has(k) && typeof v === 'string')) as Record<string, string>
  const body = chunks.length ? Buffer.concat(chunks) : null
  const spec = describeRequest({ url: target, method: req.method ?? 'GET', headers, body })
  let call
  try {
    call = session.begin(spec)
  } catch (err) {
    const code = isForkpointError(err) ? err.code : 'forkpoint_proxy_error'
    return fail(res, 599, code, (err as Error).message)
  }
  if (call.recorded) {
    let served: HttpResponseData
    try {
      served = recordedResponse(call.servedOutput())
    } catch (err) {
      return fail(res, 599, 'forkpoint_replay_error', (err as Error).message)
    }
    res.writeHead(served.status, served.statusText, served.headers)
    for (const chunk of served.chunks) res.write(chunk)
    res.end()
    return
  }
  try {
    const upstream = await fetch(target, { method: req.method ?? 'GET', headers, body, redirect: 'manual' })
    const captured: HttpResponseData = { status: upstream.status, statusText: upstream.statusText, headers: Object.fromEntries(upstream.headers), chunks: [] }
    const out = Object.fromEntries([...upstream.headers].filter(([k]) => k !== 'content-encoding' && k !== 'content-length' && k !== 'transfer-encoding'))
    res.writeHead(upstream.status, upstream.statusText, out)
    if (upstream.body) {
      for await (const chunk of upstream.body as ReadableStream<Uint8Array>) {
        captured.chunks.push(Buffer.from(chunk))
        res.write(chunk)
      }
    }
    res.end()
    call.finish(responseOutput(spec.api, captured))
  } catch (err) {
    call.fail(err)
    if (!res.headersSent) fail(res, 502, 'forkpoint_upstream_error', `upstream ${target} failed: ${(err as Error).message}`)
    else res.destroy()
  }
}

function fail(res: ServerResponse, status: number, type: string, message: string): void {
  if (res.headersSent) return void res.destroy()
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ error: { type, message } }))
}
