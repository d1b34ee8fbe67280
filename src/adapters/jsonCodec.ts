import type { JsonValue } from '../objects/Run.js'

/**
 * What agent frameworks pass and return hold Dates (response timestamps), bytes (file
 * parts), URLs and Errors (stream error parts); a run holds JSON. Each is written as a
 * one-key marker object (`{"$date": ...}`), and a key of the caller's own that starts
 * with `$` gets one more `$`, so no caller's object is ever read back as a marker.
 */
export function encode(value: unknown): JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : { $number: String(value) }
  if (value instanceof Date) return { $date: value.toISOString() }
  if (value instanceof Uint8Array) return { $bytes: Buffer.from(value).toString('base64') }
  if (value instanceof URL) return { $url: value.href }
  if (value instanceof Error) return { $error: { name: value.name, message: value.message } }
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : encode(item)))
  if (typeof value === 'object') {
    const out: { [key: string]: JsonValue } = {}
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined || typeof item === 'function' || item instanceof AbortSignal) continue
      define(out, key.startsWith('$') ? `$${key}` : key, encode(item))
    }
    return out
  }
  return null // undefined, a function, a symbol or a bigint: nothing a model call carries
}

/** The value `encode` was given, as far as JSON can carry it. */
export function decode(value: JsonValue): unknown {
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.map(decode)
  const keys = Object.keys(value)
  if (keys.length === 1) {
    const marker = value[keys[0]!]
    switch (keys[0]) {
      case '$date':
        return new Date(marker as string)
      case '$bytes':
        return new Uint8Array(Buffer.from(marker as string, 'base64'))
      case '$url':
        return new URL(marker as string)
      case '$number':
        return Number(marker)
      case '$error': {
        const { name, message } = marker as { name: string; message: string }
        return Object.assign(new Error(message), { name })
      }
    }
  }
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) define(out, key.startsWith('$$') ? key.slice(1) : key, decode(item))
  return out
}

/** Set a key as data, whatever its name: `__proto__` from parsed JSON is a key like any other, not the object's prototype. */
function define(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}
