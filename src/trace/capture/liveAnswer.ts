import type { IncomingMessage, ServerResponse } from 'node:http'
import type { RequestHandler } from '../../sandbox/egressServer.js'
import { TARGET_HEADER } from './effectsProxyProtocol.js'
import { type HttpRequestData, type HttpResponseData, RESPONSE_HOP_HEADERS } from './httpExchange.js'

/** An answer as it arrives: its head, then its body, chunk by chunk. */
export interface LiveResponse {
  status: number
  statusText: string
  headers: Record<string, string>
  body: AsyncIterable<Uint8Array> | null
}

/** Where a proxy gets the answer to a request it does not serve from a recording: the server, or an effects ledger before it. */
export type LiveAnswer = (request: HttpRequestData) => Promise<LiveResponse>

/** Request headers that describe the hop to the proxy, not the request. */
const NOT_FORWARDED = new RegExp(`^(host|connection|keep-alive|proxy-.*|transfer-encoding|content-length|te|trailer|upgrade|expect|${TARGET_HEADER})$`, 'i')

/** The request from the server, as is (redirects are the agent's to follow). */
export const fetchLive: LiveAnswer = async (request) => {
  const upstream = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body, redirect: 'manual' })
  const headers = Object.fromEntries([...upstream.headers].filter(([k]) => !RESPONSE_HOP_HEADERS.test(k)))
  return { status: upstream.status, statusText: upstream.statusText, headers, body: upstream.body }
}

/** A whole answer (from a ledger or a recording) as a live one. */
export function answeredWith(data: HttpResponseData): LiveResponse {
  return { status: data.status, statusText: data.statusText, headers: data.headers, body: data.chunks.length > 0 ? toIterable(data.chunks) : null }
}

async function* toIterable(chunks: Buffer[]): AsyncIterable<Uint8Array> {
  yield* chunks
}

/** The agent's request for `url`, read whole, without the headers of the hop to the proxy. */
export async function readRequest(url: string, req: IncomingMessage): Promise<HttpRequestData> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && !NOT_FORWARDED.test(name)) headers[name] = value
  return { url, method: req.method ?? 'GET', headers, body: chunks.length > 0 ? Buffer.concat(chunks) : null }
}

/** Stream `live` to the agent at the pace it reads; each chunk also goes to `kept`, for a recording. */
export async function writeLive(res: ServerResponse, live: LiveResponse, kept?: Buffer[]): Promise<void> {
  res.writeHead(live.status, live.statusText, live.headers)
  if (live.body) {
    for await (const chunk of live.body) {
      kept?.push(Buffer.from(chunk))
      if (!res.write(chunk)) await drained(res)
    }
  }
  res.end()
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done)
      resolve()
    }
    res.on('drain', done).on('close', done)
  })
}

/** A handler answering every request from `live`. */
export function answerFrom(live: LiveAnswer): RequestHandler {
  return async (url, req, res) => writeLive(res, await live(await readRequest(url, req)))
}
