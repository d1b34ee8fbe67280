import { type IncomingMessage, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fetchLive } from './liveAnswer.js'
import { recordedAnswer, refuseRequest } from './recordedAnswer.js'
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

/** Where the agent's SDKs would have gone: its environment's base URLs, else the public APIs. */
export function defaultUpstreams(env: NodeJS.ProcessEnv): ProxyUpstreams {
  return {
    openai: env['OPENAI_BASE_URL'] ?? 'https://api.openai.com/v1',
    anthropic: env['ANTHROPIC_BASE_URL'] ?? 'https://api.anthropic.com',
  }
}

/**
 * A local HTTP proxy for agents in any language: `/openai/…` and `/anthropic/…` are
 * forwarded to the real APIs and recorded into `session` (the same steps in-process
 * capture makes, named by the upstream URL, not the proxy's), or served from the
 * recording during replay. Listens on 127.0.0.1 only, or on a unix socket (`socketPath`)
 * for agents inside a network namespace.
 */
export async function startRecordingProxy({ session, upstreams, socketPath }: { session: Session; upstreams: ProxyUpstreams; socketPath?: string }): Promise<RecordingProxy> {
  const server = createServer((req, res) => {
    handle(session, upstreams, req, res).catch((err: unknown) => refuseRequest(res, 502, 'forkpoint_proxy_error', (err as Error).message))
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
  if (!route) return refuseRequest(res, 404, 'forkpoint_proxy_route', `forkpoint proxy serves /openai/… and /anthropic/… only, not ${req.url}`)
  const base = upstreams[route[1] as keyof ProxyUpstreams].replace(/\/+$/, '')
  return recordedAnswer(session, fetchLive)(`${base}${route[2] ?? ''}`, req, res)
}
