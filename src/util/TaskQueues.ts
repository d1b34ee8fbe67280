/**
 * Tasks run one after another per key, in the order they were asked for; a task that
 * fails does not stop the next. A key's queue is forgotten once it runs dry.
 */
export class TaskQueues {
  readonly #tails = new Map<string, Promise<unknown>>()

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.#tails.get(key) ?? Promise.resolve()
    const run = before.then(task, task)
    const settled = run.catch(() => undefined)
    this.#tails.set(key, settled)
    try {
      return await run
    } finally {
      if (this.#tails.get(key) === settled) this.#tails.delete(key)
    }
  }
}
