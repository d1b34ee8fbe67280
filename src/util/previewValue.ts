/** How many characters of a hostile value an error message quotes. */
export const PREVIEW_CHARS = 60

const PREVIEW_DEPTH = 2
const PREVIEW_ITEMS = 3

/**
 * A short JSON-like preview of a value read from untrusted data, for an error message:
 * at most `max` characters, two levels and three items deep, so a value nested 100,000
 * levels or a 1 GB string costs a few characters. Never throws. `…` marks what was cut.
 */
export function previewValue(value: unknown, max = PREVIEW_CHARS): string {
  const text = preview(value, PREVIEW_DEPTH, max)
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}

function preview(value: unknown, depth: number, max: number): string {
  if (typeof value === 'string') return JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value)
  if (typeof value !== 'object' || value === null) return String(value)
  const array = Array.isArray(value)
  if (depth === 0) return array ? '[…]' : '{…}'
  const items: string[] = []
  let more = false
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue
    if (items.length === PREVIEW_ITEMS) {
      more = true
      break
    }
    const item = preview((value as Record<string, unknown>)[key], depth - 1, max)
    items.push(array ? item : `${JSON.stringify(key.length > max ? `${key.slice(0, max)}…` : key)}:${item}`)
  }
  const body = items.join(',') + (more ? ',…' : '')
  return array ? `[${body}]` : `{${body}}`
}
