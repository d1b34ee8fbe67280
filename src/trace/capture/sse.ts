import type { JsonValue } from '../../objects/Run.js'

export interface SseEvent {
  event?: string
  data: JsonValue
}

/** The events of a complete `text/event-stream` body; `data` is parsed as JSON when it is JSON. */
export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = []
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event: string | undefined
    const data: string[] = []
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim()
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
    }
    if (data.length === 0) continue
    const joined = data.join('\n')
    events.push({ ...(event ? { event } : {}), data: parseJsonOr(joined) })
  }
  return events
}

export function parseJsonOr(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue
  } catch {
    return text
  }
}
