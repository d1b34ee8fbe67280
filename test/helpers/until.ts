// No test framework imported here: benchmarks use it too.

/** Poll `cond` to a generous deadline (a busy machine is slow, not wrong). */
export async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
