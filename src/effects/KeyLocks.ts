/** One queue per key: work on a key waits for the work before it on that key; other keys run freely. */
export class KeyLocks {
  private readonly tails = new Map<string, Promise<void>>()

  async with<T>(key: string, work: () => Promise<T>): Promise<T> {
    const run = (this.tails.get(key) ?? Promise.resolve()).then(work)
    const tail = run.then(
      () => undefined,
      () => undefined,
    )
    this.tails.set(key, tail)
    try {
      return await run
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key)
    }
  }
}
