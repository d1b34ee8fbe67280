// No test framework imported here: benchmarks use it too.

/** Poll `check` until it returns something other than undefined; throws with `what` after a generous deadline (never a bound on speed). */
export async function pollFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, deadlineMs = 120_000): Promise<T> {
  const end = Date.now() + deadlineMs
  for (let wait = 20; ; wait = Math.min(wait * 2, 500)) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`gave up waiting for ${what} after ${deadlineMs / 1000} s`)
    await new Promise((resolve) => setTimeout(resolve, wait))
  }
}

/** Poll `cond` until it holds (`pollFor` of a condition), to a generous deadline: a busy machine is slow, not wrong. */
export async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  await pollFor(what, async () => ((await cond()) ? true : undefined), ms)
}
