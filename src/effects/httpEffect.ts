import { createHash } from 'node:crypto'
import type { HttpRequestData, HttpResponseData } from '../trace/capture/httpExchange.js'
import { RESPONSE_HOP_HEADERS, VOLATILE_REQUEST_HEADERS } from '../trace/capture/httpExchange.js'
import { canonicalJson } from '../util/canonicalJson.js'
import type { LedgerEntry } from '../objects/Ledger.js'

/** An HTTP request as a ledger records it (the arguments of its `http …` tool): enough to send it again later. */
export interface HttpEffectArgs {
  method: string
  url: string
  /** Lower-case names; per-call and transport headers (and Idempotency-Key, sent from the key) left out; the agent's User-Agent kept. */
  headers: Record<string, string>
  /** The body's bytes, base64; null for none. */
  body: string | null
  /** Sent as the `Idempotency-Key` header. */
  idempotencyKey: string
}

/** A response as a ledger records it (the `http …` tool's result), served again for a key already executed. */
export interface HttpEffectResult {
  status: number
  statusText: string
  headers: Record<string, string>
  body: string
}

/** The media type of the placeholder body an agent gets for a deferred request. */
export const DEFERRED_CONTENT_TYPE = 'application/json'
/** The status of the placeholder: the request was accepted for later, nothing was done yet. */
export const DEFERRED_STATUS = 202

const HOP_BY_HOP = /^(proxy-.*|te|trailer|upgrade|x-forkpoint-.*)$/i
/** Volatile for a trace's matching, yet the agent's own: a resend carries them as the agent sent them. */
const AGENT_HEADERS = /^(user-agent|accept-language)$/i

/** The tool name an HTTP request is recorded under: `http POST mail.example.com/v1/send`. */
export function httpToolName(method: string, url: string): string {
  const { host, pathname } = new URL(url)
  return `http ${method.toUpperCase()} ${host}${pathname}`
}

/** Whether a ledger entry's tool is an HTTP request this layer can send (`http METHOD host/path`). */
export function isHttpTool(tool: string): boolean {
  return tool.startsWith('http ')
}

/**
 * A request as its ledger entry's arguments. Its idempotency key is the agent's own
 * `Idempotency-Key` header when it sent one; otherwise derived from the method, URL and
 * body, so the same request is one effect.
 */
export function httpEffectArgs(req: HttpRequestData): HttpEffectArgs {
  const headers: Record<string, string> = {}
  let given: string | undefined
  for (const [name, value] of Object.entries(req.headers)) {
    const lower = name.toLowerCase()
    if (lower === 'idempotency-key') given = value
    else if ((AGENT_HEADERS.test(lower) || !VOLATILE_REQUEST_HEADERS.test(lower)) && !HOP_BY_HOP.test(lower)) headers[lower] = value
  }
  const method = req.method.toUpperCase()
  const body = req.body && req.body.length > 0 ? req.body.toString('base64') : null
  const idempotencyKey =
    given ||
    `http:${createHash('sha256')
      .update(canonicalJson({ method, url: req.url, body }))
      .digest('hex')}`
  return { method, url: req.url, headers, body, idempotencyKey }
}

/** Send a recorded request for real, with its key as `Idempotency-Key` (a resend after a crash is then safe at services that honour it). */
export async function sendHttpEffect(args: HttpEffectArgs): Promise<HttpEffectResult> {
  const res = await fetch(args.url, {
    method: args.method,
    headers: { ...args.headers, 'idempotency-key': args.idempotencyKey },
    body: args.body === null ? null : Buffer.from(args.body, 'base64'),
    redirect: 'manual',
  })
  const body = Buffer.from(await res.arrayBuffer())
  const headers = Object.fromEntries([...res.headers].filter(([k]) => !RESPONSE_HOP_HEADERS.test(k)))
  return { status: res.status, statusText: res.statusText, headers, body: body.toString('base64') }
}

export function httpResponseOf(result: HttpEffectResult): HttpResponseData {
  return { status: result.status, statusText: result.statusText, headers: result.headers, chunks: [Buffer.from(result.body, 'base64')] }
}

/**
 * What an agent gets for a deferred request: `202 Accepted`, `X-Forkpoint-Deferred: 1`,
 * `Idempotency-Key`, and a JSON body naming the deferral (documented in docs/effects.md).
 */
export function deferredResponse(entry: Pick<LedgerEntry, 'tool' | 'idempotencyKey' | 'seq'>, context: string): HttpResponseData {
  const body = {
    forkpoint: {
      deferred: true,
      tool: entry.tool,
      idempotencyKey: entry.idempotencyKey,
      seq: entry.seq,
      context,
      message: `held in the outbox of ${context}: sent once when it commits, dropped if it is aborted`,
    },
  }
  return {
    status: DEFERRED_STATUS,
    statusText: 'Accepted',
    headers: { 'content-type': DEFERRED_CONTENT_TYPE, 'x-forkpoint-deferred': '1', 'idempotency-key': entry.idempotencyKey },
    chunks: [Buffer.from(JSON.stringify(body))],
  }
}
