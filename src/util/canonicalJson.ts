import { assertDepth } from './jsonDepth.js'

/**
 * RFC 8785 (JCS) canonical JSON: object keys sorted by UTF-16 code units, no
 * whitespace, numbers in ECMAScript shortest form (so -0 is 0), strings escaped as
 * JSON.stringify does. Non-finite numbers and non-JSON values are refused rather than
 * silently turned into null, because a canonical form that loses data hashes two
 * different values alike.
 */
export function canonicalJson(value: unknown): string {
  return canonical(value, 0)
}

function canonical(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value)
    case 'boolean':
      return value ? 'true' : 'false'
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON cannot hold ${value}`)
      return JSON.stringify(value)
    case 'object':
      if (value === null) return 'null'
      assertDepth(depth + 1)
      if (Array.isArray(value)) {
        // arrays of scalars (a pack index's 100k entries) print as JSON.stringify prints them: one call, not one per value
        if (scalarsOnly(value, depth + 1)) return JSON.stringify(value)
        return `[${Array.from(value, (v) => canonical(v, depth + 1)).join(',')}]` // Array.from visits holes, which map skips
      }
      return canonicalObject(value as Record<string, unknown>, depth + 1)
    default:
      throw new TypeError(`canonical JSON cannot hold a value of type ${typeof value}`)
  }
}

/** Whether an array holds only strings, booleans, nulls, finite numbers and such arrays (within the depth limit): what JSON.stringify prints canonically. */
function scalarsOnly(array: unknown[], depth: number): boolean {
  assertDepth(depth)
  for (let i = 0; i < array.length; i++) {
    const v = array[i]
    const printable = Array.isArray(v) ? scalarsOnly(v, depth + 1) : typeof v === 'number' ? Number.isFinite(v) : typeof v === 'string' || typeof v === 'boolean' || v === null
    if (!printable) return false
  }
  return true
}

function canonicalObject(obj: Record<string, unknown>, depth: number): string {
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort()
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(obj[k], depth)}`).join(',')}}`
}

/** The canonical bytes of a value, as stored and hashed. */
export function canonicalBytes(value: unknown): Buffer {
  return Buffer.from(canonicalJson(value), 'utf8')
}
