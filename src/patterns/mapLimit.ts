/** `fn` over `items` with at most `limit` calls in flight; results in the items' order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, position: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const position = next++
      results[position] = await fn(items[position]!, position)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker))
  return results
}
