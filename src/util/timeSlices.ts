/**
 * For a loop of synchronous steps that may run long (links, renames: each takes
 * microseconds, a trip through the thread pool more): call the returned function after
 * each step; once `ms` have passed since the last pause it returns a pause to await (one
 * turn of the event loop, so others are served), else null.
 */
export function timeSlices(ms = 10): () => Promise<void> | null {
  let end = performance.now() + ms
  return () => {
    if (performance.now() <= end) return null
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      end = performance.now() + ms
    })
  }
}
