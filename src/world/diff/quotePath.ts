import { bytesOfName, hasEscapedBytes } from '../../util/fsName.js'

const NEEDS_QUOTES = /[\x00-\x1f\x7f"\\]/
const C_ESCAPES: Record<string, string> = { '\n': '\\n', '\t': '\\t', '\r': '\\r', '"': '\\"', '\\': '\\\\' }

/**
 * A path as a person should see it, as git quotes one: as it is, unless it holds control
 * characters (a newline would forge another line of output), bytes that are not UTF-8,
 * a quote or a backslash; then in double quotes with C escapes (`\n`, `\xff`).
 */
export function quotePath(path: string): string {
  if (!NEEDS_QUOTES.test(path) && !hasEscapedBytes(path)) return path
  let out = ''
  for (const ch of path) {
    const code = ch.charCodeAt(0)
    if (C_ESCAPES[ch] !== undefined) out += C_ESCAPES[ch]
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`
    else if (code >= 0xdc80 && code <= 0xdcff && ch.length === 1) out += `\\x${bytesOfName(ch).toString('hex')}`
    else out += ch
  }
  return `"${out}"`
}
