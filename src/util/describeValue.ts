import { previewValue } from './previewValue.js'

/** A value's kind for an error message: `"text"` for a string (a bounded preview), `null`, `an array`, else its typeof. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'string' ? previewValue(value) : typeof value
}
