import { JsonTooDeepError } from '../errors/index.js'

/**
 * How deep JSON may nest in anything forkpoint reads or walks (run artifacts, payloads,
 * objects). Far beyond real payloads (an LLM request with tool schemas nests a few
 * dozen levels), and far below where a recursive walk would overflow the stack.
 */
export const MAX_JSON_DEPTH = 1000

/**
 * How large a JSON file read whole may be (a run artifact, a transcript): three times a
 * 100,000-step artifact, and under the longest string V8 makes (about 512 MiB), past
 * which decoding the bytes would crash instead of refusing them.
 */
export const MAX_JSON_FILE_BYTES = 256 * 1024 * 1024

/** Throw when a recursive walk reaches `depth` past the limit. */
export function assertDepth(depth: number, where = 'a JSON value'): void {
  if (depth > MAX_JSON_DEPTH) throw new JsonTooDeepError(`${where} nests deeper than ${MAX_JSON_DEPTH} levels`, { limit: MAX_JSON_DEPTH })
}

/** Whether JSON text opens more than `MAX_JSON_DEPTH` arrays or objects at once, by one scan of its bytes before parsing. */
export function jsonTextTooDeep(text: Buffer | string): boolean {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text
  let depth = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) return true
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return false
}
