import type { Job } from 'bullmq'

/** Job states in which no worker has taken the job yet. */
const NOT_TAKEN = ['waiting', 'prioritized', 'delayed', 'waiting-children']

/**
 * Once `afterMs` has passed, `notice()` when no worker has taken any of `jobs` (each still
 * waiting in the queue): a fan-out with no worker running would otherwise wait in silence.
 * Nothing is cancelled; the fan-out keeps waiting. `afterMs` 0 turns it off. Returns the stop.
 */
export function noticeIdleQueue({ jobs, afterMs, notice }: { jobs: Job[]; afterMs: number; notice: () => void }): () => void {
  if (afterMs <= 0) return () => undefined
  let stopped = false
  const timer = setTimeout(() => {
    void Promise.all(jobs.map((j) => j.getState().catch(() => 'unknown'))).then((states) => {
      if (!stopped && states.every((s) => NOT_TAKEN.includes(s))) notice()
    })
  }, afterMs)
  return () => {
    stopped = true
    clearTimeout(timer)
  }
}
