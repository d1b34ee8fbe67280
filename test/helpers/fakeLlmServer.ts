import { randomUUID } from 'node:crypto'
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What the fake API saw: method, path, headers and parsed body of each request. */
export interface SeenRequest {
  method: string
  path: string
  headers: Record<string, string | string[] | undefined>
  body: unknown
}

export interface FakeLlmServer {
  url: string
  requests: SeenRequest[]
  close(): Promise<void>
}

/**
 * A local OpenAI-style (`/v1/chat/completions`) and Anthropic-style (`/v1/messages`)
 * API on 127.0.0.1, streaming (SSE, one event per write) when asked, with a fresh id
 * and creation time per response like the real ones, plus `/v1/echo` for plain HTTP.
 * Replies are a function of the last user message, so a changed prompt changes them.
 */
export async function startFakeLlmServer(): Promise<FakeLlmServer> {
  const requests: SeenRequest[] = []
  const server = createServer((req, res) => {
    void handle(req, res, requests)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}

async function handle(req: IncomingMessage, res: ServerResponse, log: SeenRequest[]): Promise<void> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  const text = Buffer.concat(chunks).toString()
  const body = text ? (JSON.parse(text) as Record<string, unknown>) : null
  const path = req.url ?? '/'
  log.push({ method: req.method ?? 'GET', path, headers: req.headers, body })
  const auth = req.headers['authorization'] ?? req.headers['x-api-key']
  if (path !== '/v1/echo' && !auth) return json(res, 401, { error: { message: 'missing api key' } })
  const last = lastUserText(body)
  const answer = `answer to: ${last} ✓`
  if (path === '/v1/chat/completions') {
    const id = `chatcmpl-${randomUUID().replace(/-/g, '').slice(0, 20)}`
    const created = Math.floor(Date.now() / 1000)
    if (body?.['stream']) {
      return sse(res, [
        ...answer.split(' ').map((word, i) => ({
          data: { id, object: 'chat.completion.chunk', created, model: body['model'], choices: [{ index: 0, delta: { content: i === 0 ? word : ` ${word}` } }] },
        })),
        { data: { id, object: 'chat.completion.chunk', created, model: body['model'], choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] } },
        { raw: '[DONE]' },
      ])
    }
    return json(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model: body?.['model'],
      choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 4 },
    })
  }
  if (path === '/v1/messages') {
    const id = `msg_${randomUUID().replace(/-/g, '').slice(0, 20)}`
    if (body?.['stream']) {
      return sse(res, [
        { event: 'message_start', data: { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: body['model'], content: [] } } },
        { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
        ...answer
          .split(' ')
          .map((word, i) => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: i === 0 ? word : ` ${word}` } } })),
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        { event: 'message_stop', data: { type: 'message_stop' } },
      ])
    }
    return json(res, 200, {
      id,
      type: 'message',
      role: 'assistant',
      model: body?.['model'],
      content: [{ type: 'text', text: answer }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 5, output_tokens: 4 },
    })
  }
  if (path === '/v1/echo') return json(res, 200, { echo: body, at: new Date().toISOString() })
  return json(res, 404, { error: { message: `no route ${path}` } })
}

function lastUserText(body: Record<string, unknown> | null): string {
  const messages = (body?.['messages'] as Array<{ role: string; content: unknown }> | undefined) ?? []
  const last = [...messages].reverse().find((m) => m.role === 'user')
  return typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? null)
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': randomUUID() })
  res.end(JSON.stringify(value))
}

async function sse(res: ServerResponse, events: Array<{ event?: string; data?: unknown; raw?: string }>): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  for (const e of events) {
    res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${e.raw ?? JSON.stringify(e.data)}\n\n`)
    await new Promise((r) => setTimeout(r, 2))
  }
  res.end()
}
