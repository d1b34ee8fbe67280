import { type IncomingMessage, type ServerResponse, createServer } from 'node:http'
import { type AddressInfo, type Socket, connect } from 'node:net'
import { pathToFileURL } from 'node:url'
import { isForkpointError } from '../errors/index.js'
import { failResponse } from '../util/failResponse.js'
import { EFFECTS_PROXY_ENV, TARGET_HEADER } from '../trace/capture/effectsProxyProtocol.js'
import { type LiveAnswer, answerFrom, answeredWith, fetchLive } from '../trace/capture/liveAnswer.js'
import { builtEntry } from '../util/builtEntry.js'
import type { HttpEffects } from './HttpEffects.js'
import { type HttpPolicy, policyNamesHost } from './httpPolicy.js'

export interface EffectsProxy {
  url: string
  /** What points an agent's HTTP at the proxy: the standard proxy variables (curl, Python, Go, Ruby…) and, for Node, a hook. */
  env: Record<string, string>
  close(): Promise<void>
}

export interface StartEffectsProxyArgs {
  effects: HttpEffects
  policy: HttpPolicy
  /** Also load the Node hook into Node agents (NODE_OPTIONS); off where the agent cannot see forkpoint's files (a sandbox) or where forkpoint/register's capture does the same (`run --record`). @default true */
  nodeHook?: boolean
  /** The agent's environment, whose NODE_OPTIONS the hook is added to. */
  env: NodeJS.ProcessEnv
}

/**
 * An HTTP proxy on 127.0.0.1 for an agent in any language: each request the policy classes
 * goes through `effects` (deferred in a branch, sent once per key, or answered from the
 * ledger); anything else is passed on as it is. HTTPS through CONNECT is end-to-end
 * encrypted, so a tunnel to a host the policy names is refused rather than let a request
 * slip past the outbox; tunnels to other hosts pass.
 */
export async function startEffectsProxy({ effects, policy, nodeHook = true, env }: StartEffectsProxyArgs): Promise<EffectsProxy> {
  const server = createServer((req, res) => {
    handle(effects, req, res).catch((err: unknown) => failResponse(res, isForkpointError(err) ? 409 : 502, err))
  })
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => tunnel(policy, req, client, head))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    env: {
      HTTP_PROXY: url,
      http_proxy: url,
      HTTPS_PROXY: url,
      https_proxy: url,
      // every request reaches the proxy, which passes on what the policy does not class
      NO_PROXY: '',
      no_proxy: '',
      // read by the Node hook, and by forkpoint/register's capture (`run --record`), which send live calls here
      [EFFECTS_PROXY_ENV]: url,
      ...(nodeHook ? { NODE_OPTIONS: `--import=${pathToFileURL(builtEntry('effects', 'nodeHook.js')).href} ${env['NODE_OPTIONS'] ?? ''}`.trim() } : {}),
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

async function handle(effects: HttpEffects, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const named = req.headers[TARGET_HEADER]
  const url = typeof named === 'string' ? named : (req.url ?? '')
  if (!/^https?:\/\//i.test(url)) return failResponse(res, 400, new Error(`forkpoint effects proxy: ${url} is not a proxy request (point HTTP_PROXY at this proxy)`))
  return answerFrom(effectsLive(effects))(url, req, res)
}

/**
 * Where the agent's requests get their answers under a policy: from `effects` when the
 * policy classes them (held in a branch's outbox, sent once per key, or answered from the
 * ledger), else from the server.
 */
export function effectsLive(effects: HttpEffects): LiveAnswer {
  return async (request) => {
    const answer = await effects.handle(request)
    return answer ? answeredWith(answer) : fetchLive(request)
  }
}

function tunnel(policy: HttpPolicy, req: IncomingMessage, client: Socket, head: Buffer): void {
  const target = req.url ?? ''
  client.on('error', () => undefined)
  if (policyNamesHost(policy, target)) {
    client.end(
      `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nforkpoint effects proxy: ${target} is named by the effects policy; an HTTPS tunnel would hide its requests from the outbox (use http:// or the Node hook)\n`,
    )
    return
  }
  const [host, port] = splitHostPort(target)
  const upstream = connect(port, host, () => {
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
    upstream.write(head)
    upstream.pipe(client).pipe(upstream)
  })
  upstream.on('error', () => client.destroy())
}

function splitHostPort(target: string): [string, number] {
  const at = target.lastIndexOf(':')
  return at > 0 ? [target.slice(0, at).replace(/^\[|\]$/g, ''), Number(target.slice(at + 1)) || 443] : [target, 443]
}
