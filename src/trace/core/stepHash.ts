import { createHash, createHmac } from 'node:crypto'
import { assertDepth } from '../../util/jsonDepth.js'

const NON_ASCII = /[^\x00-\x7f]/

function nfc(text: string): string {
  return NON_ASCII.test(text) ? text.normalize('NFC') : text
}

/** Strings and keys in Unicode NFC, so the same text typed two ways hashes alike. */
export function normalizeNfc(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return nfc(value)
  if (typeof value !== 'object' || value === null) return value
  assertDepth(depth + 1)
  if (Array.isArray(value)) return value.map((v) => normalizeNfc(v, depth + 1))
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[nfc(k)] = normalizeNfc(v, depth + 1)
  return out
}

/**
 * The canonical text a step payload is compared and hashed by: RFC 8785 JSON (as
 * util/canonicalJson writes it) of the payload with every string and key in Unicode
 * NFC, in one pass. Refuses non-finite numbers and non-JSON values like canonicalJson.
 */
export function hashableText(value: unknown): string {
  return hashable(value, 0)
}

function hashable(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(nfc(value))
    case 'boolean':
      return value ? 'true' : 'false'
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON cannot hold ${value}`)
      return JSON.stringify(value)
    case 'object': {
      if (value === null) return 'null'
      assertDepth(depth + 1)
      if (Array.isArray(value)) return `[${value.map((v) => hashable(v, depth + 1)).join(',')}]`
      const entries = new Map<string, unknown>()
      for (const [k, v] of Object.entries(value)) if (v !== undefined) entries.set(nfc(k), v)
      const keys = [...entries.keys()].sort()
      return `{${keys.map((k) => `${JSON.stringify(k)}:${hashable(entries.get(k), depth + 1)}`).join(',')}}`
    }
    default:
      throw new TypeError(`canonical JSON cannot hold a value of type ${typeof value}`)
  }
}

/**
 * Hex sha256 of a payload's hashable text; with `key`, HMAC-SHA256 instead (encrypted
 * runs, so a hash cannot be used to confirm a guessed payload). Bare hex, never the
 * `sha256:` digest form: these name no object in the store.
 */
export function hashPayload(value: unknown, key?: Buffer): string {
  const text = hashableText(value)
  return key ? createHmac('sha256', key).update(text).digest('hex') : createHash('sha256').update(text).digest('hex')
}
