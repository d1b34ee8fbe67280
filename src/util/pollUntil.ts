/**
 * Ask `check` until it gives something other than undefined, waiting 1 ms after the first
 * miss and twice as long after each next one, up to `maxWaitMs`. No deadline: `check`
 * throws when waiting longer makes no sense (the process it waits on exited).
 */
export async function pollUntil<T>(check: () => Promise<T | undefined> | T | undefined, maxWaitMs = 50): Promise<T> {
  for (let wait = 1; ; wait = Math.min(wait * 2, maxWaitMs)) {
    const value = await check()
    if (value !== undefined) return value
    await new Promise((resolve) => setTimeout(resolve, wait))
  }
}
