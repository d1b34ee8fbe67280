import type { Job, QueueEvents } from 'bullmq'
import type { Redis } from 'ioredis'
import type { Digest } from '../objects/digest.js'
import { messageOf } from '../patterns/runCandidates.js'
import type { CandidateResult } from '../patterns/types.js'
import { type FanoutJobResult, CANCEL_CHANNEL, cancelledKey } from './FanoutJob.js'
import { type SignedJobData, type SignedJobResult, verifyResult } from './jobSignature.js'
import type { FanoutEvent } from './queueRunner.js'

/** How long the cancellation key lives: longer than any job waits in a queue. */
const CANCEL_TTL_S = 24 * 3600

/**
 * Wait for every job of the group to end, as results in the jobs' order. With
 * `firstWins`, the first success (or `signal`) cancels the rest: the key that makes
 * workers skip a job of the group, the pub/sub message that kills running ones, and
 * removal of those still waiting; a success that ends after the winner counts as cancelled.
 * Returns only when each job has ended (its candidate's processes gone, its branch aborted).
 */
export async function collectJobs({
  jobs,
  key,
  events,
  redis,
  group,
  firstWins,
  signal,
  emit,
}: {
  jobs: Job<SignedJobData, SignedJobResult>[]
  /** The queue's key: a report not signed with it is the candidate's error. */
  key: Buffer
  events: QueueEvents
  redis: Redis
  group: string
  firstWins: boolean
  signal: AbortSignal | undefined
  emit: (event: FanoutEvent) => void
}): Promise<{ results: CandidateResult[]; manifests: Map<number, Digest> }> {
  const started = performance.now()
  let cancelled: string | null = null
  const removed = new Map<string, () => void>()
  const ended = new Set<string>()
  const manifests = new Map<number, Digest>()
  const cancel = async (reason: string) => {
    if (cancelled !== null) return
    cancelled = reason
    emit({ type: 'cancelling', reason })
    try {
      await redis.set(cancelledKey(group), reason, 'EX', CANCEL_TTL_S)
      await redis.publish(CANCEL_CHANNEL, group)
      for (const job of jobs) {
        if (ended.has(job.id!) || !['waiting', 'prioritized', 'delayed'].includes(await job.getState())) continue
        const gone = await job.remove().then(
          () => true,
          () => false, // taken by a worker meanwhile: the key or the message stops it
        )
        if (gone) removed.get(job.id!)?.()
      }
    } catch {
      // Redis unreachable for a moment: the losers run to their end, and their successes count as cancelled
    }
  }
  const onAbort = () => void cancel('the pattern was cancelled')
  if (signal?.aborted) onAbort()
  signal?.addEventListener('abort', onAbort, { once: true })
  try {
    const results = await Promise.all(
      jobs.map(async (job) => {
        const index = job.data.index
        const result = await new Promise<CandidateResult>((resolve) => {
          const base = { index, branch: null, branchPath: null }
          removed.set(job.id!, () => resolve({ ...base, status: 'cancelled', success: false, score: null, error: `cancelled before it started: ${cancelled}`, durationMs: 0 }))
          job
            .waitUntilFinished(events)
            .then((signed: SignedJobResult) => verifyResult(key, job.id!, signed))
            .then(
              (r) => {
                if (r.image) manifests.set(index, r.image.manifest)
                resolve(fromReport(index, r, performance.now() - started))
              },
              (err: unknown) => resolve({ ...base, status: 'error', success: false, score: null, error: messageOf(err), durationMs: performance.now() - started }),
            )
        })
        ended.add(job.id!)
        if (result.success && cancelled !== null) Object.assign(result, { status: 'cancelled', success: false, error: `cancelled: ${cancelled}` })
        emit({ type: 'finished', index, status: result.status, worker: result.worker ?? null, ...(result.error ? { error: result.error } : {}) })
        if (firstWins && result.success) await cancel(`candidate ${index} won`)
        return result
      }),
    )
    return { results, manifests }
  } finally {
    signal?.removeEventListener('abort', onAbort)
  }
}

function fromReport(index: number, r: FanoutJobResult, durationMs: number): CandidateResult {
  return {
    index,
    status: r.status,
    success: r.status === 'succeeded',
    score: r.score,
    ...(r.value === undefined ? {} : { value: r.value }),
    ...(r.error === undefined ? {} : { error: r.error }),
    branch: null,
    branchPath: null,
    durationMs,
    worker: r.worker,
    ...(r.image ? { image: r.image.id } : {}),
  }
}
