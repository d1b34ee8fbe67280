/** `Promise.all`, but it returns or throws (the first failure) only once every promise has settled: nothing of the work is left running. */
export async function settleAll<T extends readonly unknown[]>(promises: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  return valuesOrFirstFailure(await Promise.allSettled(promises)) as unknown as T
}

/** Run `steps` one after another, each whatever became of those before; their results, or (once all ran) the first failure. */
export async function settleInTurn<T extends readonly unknown[]>(steps: { [K in keyof T]: () => Promise<T[K]> }): Promise<T> {
  const settled: Array<PromiseSettledResult<unknown>> = []
  for (const step of steps as ReadonlyArray<() => Promise<unknown>>) {
    settled.push(
      await step().then(
        (value) => ({ status: 'fulfilled' as const, value }),
        (reason: unknown) => ({ status: 'rejected' as const, reason }),
      ),
    )
  }
  return valuesOrFirstFailure(settled) as unknown as T
}

function valuesOrFirstFailure(settled: ReadonlyArray<PromiseSettledResult<unknown>>): unknown[] {
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failed) throw failed.reason
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value)
}
