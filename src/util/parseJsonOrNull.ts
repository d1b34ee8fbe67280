/** JSON text's value, or null when it is not JSON: for a file a schema checks next, where both mean "not ours". */
export function parseJsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}
