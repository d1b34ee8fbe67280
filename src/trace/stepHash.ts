import { createHash, createHmac } from 'node:crypto'
import { canonicalJson } from '../util/canonicalJson.js'

/** Strings and keys in Unicode NFC, so the same text typed two ways hashes alike. */
export function normalizeNfc(value: unknown): unknown {
  if (typeof value === 'string') return value.normalize('NFC')
  if (Array.isArray(value)) return value.map(normalizeNfc)
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k.normalize('NFC')] = normalizeNfc(v)
    return out
  }
  return value
}

/** The canonical text a step payload is hashed by: NFC strings, RFC 8785 JSON. */
export function hashableText(value: unknown): string {
  return canonicalJson(normalizeNfc(value))
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
