import { MAX_JSON_DEPTH } from './jsonDepth.js'

/**
 * Parse JSON text from untrusted data as forkpoint's structured objects are written: at
 * most MAX_JSON_DEPTH deep (every walk of it stays far from the stack's end), no key twice
 * in one object (JSON.parse keeps the last, so two readers could see two objects), no
 * `__proto__` key, and no number a double cannot hold (`1e400` parses as Infinity, which
 * canonical JSON cannot write back). Throws a SyntaxError naming the first fault.
 */
export function parseStrictJson(bytes: Buffer): unknown {
  const members = countMembers(bytes)
  const value: unknown = JSON.parse(bytes.toString('utf8'))
  if (checkValue(value) !== members) throw new SyntaxError('an object holds the same key twice')
  return value
}

/** How many object members (`"key":`) the text holds, by one scan of its bytes; throws when it nests too deep. */
function countMembers(bytes: Buffer): number {
  let depth = 0
  let members = 0
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!
    if (c === 0x22) i = stringEnd(bytes, i)
    else if (c === 0x3a) members++
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) throw new SyntaxError(`it nests deeper than ${MAX_JSON_DEPTH} levels`)
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return members
}

/** The members of every object in `value` (parsed, so within the depth limit), after refusing a `__proto__` key or a non-finite number. */
function checkValue(value: unknown): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new SyntaxError('a number is too large for a double')
    return 0
  }
  if (typeof value !== 'object' || value === null) return 0
  let members = 0
  if (Array.isArray(value)) {
    for (const item of value) members += checkValue(item)
    return members
  }
  for (const key of Object.keys(value)) {
    if (key === '__proto__') throw new SyntaxError('an object has a "__proto__" key')
    members += 1 + checkValue((value as Record<string, unknown>)[key])
  }
  return members
}

/** Where the string opened at `start` closes (its last byte when it never does), by native search: most of a tree's bytes are inside strings. */
function stringEnd(bytes: Buffer, start: number): number {
  for (let quote = bytes.indexOf(0x22, start + 1); quote !== -1; quote = bytes.indexOf(0x22, quote + 1)) {
    let backslashes = 0
    while (bytes[quote - 1 - backslashes] === 0x5c) backslashes++
    if (backslashes % 2 === 0) return quote
  }
  return bytes.length
}
