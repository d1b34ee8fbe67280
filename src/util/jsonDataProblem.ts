import { MAX_JSON_DEPTH } from './jsonDepth.js'

/**
 * Why a parsed JSON value cannot be taken as data, or null when it can: it nests deeper
 * than `MAX_JSON_DEPTH`, or holds a number `JSON.parse` made infinite (`1e400`), which no
 * hash or canonical form can carry. Walks with its own stack, so no nesting overflows it;
 * loaders of untrusted JSON call it once, before any recursive walk.
 */
export function jsonDataProblem(value: unknown): string | null {
  const values: unknown[] = [value]
  const depths: number[] = [0]
  while (values.length > 0) {
    const v = values.pop()
    const depth = depths.pop()!
    if (typeof v === 'number' && !Number.isFinite(v)) return 'holds a number out of range (JSON text like 1e400)'
    if (typeof v !== 'object' || v === null) continue
    if (depth >= MAX_JSON_DEPTH) return `nests deeper than ${MAX_JSON_DEPTH} levels`
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' || typeof child === 'number') {
        values.push(child)
        depths.push(depth + 1)
      }
    }
  }
  return null
}
