/**
 * Run `fn` over `items` with at most `limit` at once. The first failure stops new work;
 * the call returns (throwing that failure) only once the items already started have
 * settled, so nothing of it is still running when the caller retries.
 */
export async function forEachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  let failure: { error: unknown } | null = null
  const worker = async (): Promise<void> => {
    while (failure === null && next < items.length) {
      const item = items[next++]!
      try {
        await fn(item)
      } catch (error) {
        failure ??= { error }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker))
  if (failure !== null) throw (failure as { error: unknown }).error
}
