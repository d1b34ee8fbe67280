/** An HTTP `Range` header value: from `offset`, `length` bytes or to the end. */
export function byteRange(offset: number, length?: number): string {
  return `bytes=${offset}-${length === undefined ? '' : offset + length - 1}`
}
