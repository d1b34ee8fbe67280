import { type LlmApi, assistantText, recogniseLlmApi } from './llmApis.js'
import type { JsonValue } from '../../objects/Run.js'
import type { StepSpec } from '../record/Session.js'
import { parseJsonOr, parseSse } from './sse.js'

/** An HTTP request as any capture path sees it (fetch, http.request, the proxy). */
export interface HttpRequestData {
  url: string
  method: string
  headers: Record<string, string>
  body: Buffer | null
}

/** A response as received, chunk by chunk. */
export interface HttpResponseData {
  status: number
  statusText: string
  headers: Record<string, string>
  chunks: Buffer[]
}

/** Headers that change on every call or describe the transport, not the exchange: left out of step inputs. */
export const VOLATILE_REQUEST_HEADERS =
  /^(host|content-length|connection|keep-alive|user-agent|accept-encoding|transfer-encoding|date|traceparent|tracestate|idempotency-key|x-request-id|x-stainless-.*|sec-fetch-.*|accept-language)$/i
/** Response headers of the hop, not the answer: framing is redone, and fetch has already decoded the body. */
export const RESPONSE_HOP_HEADERS = /^(content-length|content-encoding|transfer-encoding|connection|keep-alive)$/i
/** Response headers not replayed: framing is redone, bodies are served decoded, the rest is per call. */
const DROPPED_RESPONSE_HEADERS = /^(content-length|content-encoding|transfer-encoding|connection|keep-alive|date)$/i

/** The step a request is: an `llm` step for a recognised LLM API, else a `tool` step `http METHOD host/path`. */
export function describeRequest(req: HttpRequestData): StepSpec & { api: LlmApi | null } {
  const url = new URL(req.url)
  const method = req.method.toUpperCase()
  const headers = lowerKeys(req.headers)
  const api = recogniseLlmApi(method, url.pathname, headers)
  const body = requestBody(req.body, headers['content-type'])
  if (api && typeof body === 'object' && body !== null && !Array.isArray(body) && !('base64' in body)) {
    return { name: api.name, type: 'llm', input: { api: api.name, ...withoutCallerIdentity(api, body) }, meta: { url: req.url, method, headers }, api }
  }
  const kept = Object.fromEntries(Object.entries(headers).filter(([k]) => !VOLATILE_REQUEST_HEADERS.test(k)))
  return { name: `http ${method} ${url.host}${url.pathname}`, type: 'tool', input: { method, url: req.url, headers: kept, body }, api: null }
}

/**
 * An Anthropic request's `metadata.user_id` says who calls (Claude Code puts its session id
 * there), not what is asked: left out of the step, a second session asking the same thing
 * matches the recording.
 */
function withoutCallerIdentity(api: LlmApi, body: { [key: string]: JsonValue }): { [key: string]: JsonValue } {
  const metadata = body['metadata']
  if (api.provider !== 'anthropic' || typeof metadata !== 'object' || metadata === null || Array.isArray(metadata) || !('user_id' in metadata)) return body
  const { user_id: _caller, ...rest } = metadata
  const { metadata: _metadata, ...others } = body
  return Object.keys(rest).length > 0 ? { ...others, metadata: rest } : others
}

function requestBody(body: Buffer | null, contentType = ''): JsonValue {
  if (!body || body.length === 0) return null
  const text = decodeUtf8(body)
  if (text === null) return { base64: body.toString('base64') }
  return /json/i.test(contentType) || /^\s*[{[]/.test(text) ? parseJsonOr(text) : text
}

/** What a response is recorded as: status, kept headers, the exact body (chunk by chunk when streamed) and its parsed form. */
export function responseOutput(api: LlmApi | null, res: HttpResponseData): JsonValue {
  const headers = Object.fromEntries(Object.entries(lowerKeys(res.headers)).filter(([k]) => !DROPPED_RESPONSE_HEADERS.test(k)))
  const contentType = headers['content-type'] ?? ''
  const all = Buffer.concat(res.chunks)
  const text = decodeUtf8(all)
  const out: { [key: string]: JsonValue } = { status: res.status, statusText: res.statusText, headers }
  if (text === null) {
    out['body'] = { base64: all.toString('base64') }
    return out
  }
  const streamed = /text\/event-stream/i.test(contentType)
  out['body'] = streamed ? { chunks: utf8Chunks(res.chunks) } : { text }
  const events = streamed ? parseSse(text) : null
  if (events) out['events'] = events as unknown as JsonValue
  else if (/json/i.test(contentType)) out['json'] = parseJsonOr(text)
  if (api) {
    const said = assistantText(api, out['json'] ?? null, events)
    if (said !== null) out['text'] = said
  }
  return out
}

/** A recorded response back as status, headers and the exact byte chunks. */
export function recordedResponse(output: JsonValue): HttpResponseData {
  const o = (output ?? {}) as { status?: number; statusText?: string; headers?: Record<string, string>; body?: { text?: string; base64?: string; chunks?: string[] } }
  const body = o.body ?? {}
  const chunks = body.chunks
    ? body.chunks.map((c) => Buffer.from(c, 'utf8'))
    : body.base64 !== undefined
      ? [Buffer.from(body.base64, 'base64')]
      : body.text !== undefined
        ? [Buffer.from(body.text, 'utf8')]
        : []
  return { status: o.status ?? 200, statusText: o.statusText ?? '', headers: o.headers ?? {}, chunks }
}

/** Chunks as strings without splitting a UTF-8 sequence, so joined and re-encoded they are the same bytes. */
function utf8Chunks(chunks: Buffer[]): string[] {
  const decoder = new TextDecoder('utf-8')
  const out = chunks.map((c) => decoder.decode(c, { stream: true }))
  const tail = decoder.decode()
  if (tail) out.push(tail)
  return out.filter((c, i) => c !== '' || i === 0)
}

function decodeUtf8(bytes: Buffer): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    return null
  }
}

function lowerKeys(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = v
  return out
}
