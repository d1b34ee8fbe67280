import type { JsonValue } from '../../objects/Run.js'
import type { SseEvent } from './sse.js'

/** An LLM API call recognised by its path: OpenAI, Anthropic, and anything OpenAI-compatible. */
export interface LlmApi {
  name: string
  provider: 'openai' | 'anthropic'
}

const APIS: Array<{ re: RegExp; api: LlmApi }> = [
  { re: /\/chat\/completions$/, api: { name: 'openai.chat.completions', provider: 'openai' } },
  { re: /\/v1\/messages$|\/anthropic\/messages$/, api: { name: 'anthropic.messages', provider: 'anthropic' } },
  { re: /\/responses$/, api: { name: 'openai.responses', provider: 'openai' } },
  { re: /\/embeddings$/, api: { name: 'openai.embeddings', provider: 'openai' } },
  { re: /\/completions$/, api: { name: 'openai.completions', provider: 'openai' } },
]

/** The LLM API a POST to `pathname` is, or null for any other HTTP call. */
export function recogniseLlmApi(method: string, pathname: string, headers: Record<string, string>): LlmApi | null {
  if (method !== 'POST') return null
  const path = pathname.replace(/\/+$/, '')
  for (const { re, api } of APIS) if (re.test(path)) return api
  if (/\/messages$/.test(path) && headers['anthropic-version']) return APIS[1]!.api
  return null
}

type Obj = { [key: string]: JsonValue }
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The assistant text of a response (whole JSON or streamed events), for readable diffs; null when there is none. */
export function assistantText(api: LlmApi, response: JsonValue, events: SseEvent[] | null): string | null {
  if (events) {
    let text = ''
    for (const { data } of events) {
      if (!isObj(data)) continue
      const choice = Array.isArray(data['choices']) ? data['choices'][0] : undefined
      const delta = isObj(choice) && isObj(choice['delta']) ? choice['delta']['content'] : undefined
      if (typeof delta === 'string') text += delta
      const block = isObj(data['delta']) ? data['delta']['text'] : undefined
      if (data['type'] === 'content_block_delta' && typeof block === 'string') text += block
      if (data['type'] === 'response.output_text.delta' && typeof data['delta'] === 'string') text += data['delta']
    }
    return text || null
  }
  if (!isObj(response)) return null
  if (api.provider === 'anthropic' && Array.isArray(response['content'])) {
    const parts = response['content']
      .filter(isObj)
      .map((c) => (typeof c['text'] === 'string' ? c['text'] : ''))
      .join('')
    return parts || null
  }
  const choice = Array.isArray(response['choices']) ? response['choices'][0] : undefined
  if (isObj(choice) && isObj(choice['message']) && typeof choice['message']['content'] === 'string') return choice['message']['content']
  if (isObj(choice) && typeof choice['text'] === 'string') return choice['text']
  if (typeof response['output_text'] === 'string') return response['output_text']
  return null
}
