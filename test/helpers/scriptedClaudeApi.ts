import { createRequire } from 'node:module'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'

/** What the model does in one turn: call a tool, or answer. */
export type Turn = { tool: string; input: Record<string, unknown> } | { text: string }

/** The conversation so far, as the script sees it: how many tool results came back, the last user text, the directory Claude Code said it works in. */
export interface Seen {
  toolResults: number
  /** Whether the last message brings a tool's result (else it is the user's). */
  answering: boolean
  lastUserText: string
  cwd: string
}

export interface ScriptedApi {
  /** For ANTHROPIC_BASE_URL. */
  url: string
  /** Each /v1/messages request's parsed body. */
  requests: Array<Record<string, unknown>>
  close(): Promise<void>
}

/** The real Claude Code binary from the npm registry (`@anthropic-ai/claude-agent-sdk`'s Linux build). */
export const CLAUDE_BIN = join(dirname(createRequire(import.meta.url).resolve(`@anthropic-ai/claude-agent-sdk-${process.platform}-${process.arch}/package.json`)), 'claude')

/** An environment for the binary: its own HOME, the scripted API, nothing that reaches for the internet. */
export function claudeEnv(home: string, api: string): Record<string, string> {
  return {
    HOME: home,
    ANTHROPIC_BASE_URL: api,
    ANTHROPIC_API_KEY: 'sk-ant-test-0123456789',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  }
}

/**
 * Anthropic's Messages API on 127.0.0.1 as a script plays it: each request is answered by
 * `script(seen)`, streamed as server-sent events when asked (as Claude Code asks), whole
 * JSON otherwise. Tool-use ids are numbered by turn, so two sessions of one script ask the same.
 */
export async function startScriptedClaudeApi(script: (seen: Seen) => Turn): Promise<ScriptedApi> {
  const requests: Array<Record<string, unknown>> = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]
      if (req.method !== 'POST' || path !== '/v1/messages') {
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end('{"type":"error","error":{"type":"not_found_error","message":"not scripted"}}')
        return
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>
      requests.push(body)
      const seen = read(body)
      const turn = script(seen)
      const block = 'tool' in turn ? { type: 'tool_use', id: `toolu_${seen.toolResults}`, name: turn.tool, input: turn.input } : { type: 'text', text: turn.text }
      reply(res, body, block)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}

function read(body: Record<string, unknown>): Seen {
  const messages = body['messages'] as Array<{ role: string; content: unknown }>
  const blocks: Array<Record<string, unknown>> = messages.flatMap((m) =>
    Array.isArray(m.content) ? (m.content as Array<Record<string, unknown>>).map((b) => ({ ...b, role: m.role })) : [{ role: m.role, type: 'text', text: m.content }],
  )
  const texts = blocks.filter((b) => b['role'] === 'user' && b['type'] === 'text').map((b) => String(b['text']))
  const all = JSON.stringify(messages)
  const dirs = [...all.matchAll(/Primary working directory: ([^\\"\s]+)/g)].map((m) => m[1]!)
  const last = messages.at(-1)?.content
  const answering = Array.isArray(last) && (last as Array<Record<string, unknown>>).some((b) => b['type'] === 'tool_result')
  return {
    answering,
    toolResults: blocks.filter((b) => b['type'] === 'tool_result').length,
    lastUserText: texts.filter((t) => !t.startsWith('<system-reminder>')).at(-1) ?? '',
    cwd: dirs.at(-1) ?? '',
  }
}

function reply(res: import('node:http').ServerResponse, body: Record<string, unknown>, block: Record<string, unknown>): void {
  const stop = block['type'] === 'tool_use' ? 'tool_use' : 'end_turn'
  const usage = { input_tokens: 10, output_tokens: 5 }
  const message = { id: 'msg_scripted', type: 'message', role: 'assistant', model: body['model'], content: [block], stop_reason: stop, stop_sequence: null, usage }
  if (body['stream'] !== true) {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify(message))
    return
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' })
  const event = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
  event('message_start', { message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } })
  if (block['type'] === 'text') {
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } })
    event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: block['text'] } })
  } else {
    event('content_block_start', { index: 0, content_block: { ...block, input: {} } })
    event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block['input']) } })
  }
  event('content_block_stop', { index: 0 })
  event('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } })
  event('message_stop', {})
  res.end()
}
