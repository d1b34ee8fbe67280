import type { FanoutEvent } from '../fanout/queueRunner.js'
import type { WorkerEvent } from '../fanout/startWorker.js'
import { short } from '../operations/text/format.js'

/** One line of a fan-out's progress, for stderr. */
export function describeFanoutEvent(e: FanoutEvent): string {
  switch (e.type) {
    case 'base':
      return `fan-out: base image ${short(e.id)} pushed (${e.sentBytes} bytes sent)`
    case 'queued':
      return `fan-out: ${e.jobs} job(s) queued (exploration ${e.group})`
    case 'progress':
      return `fan-out: #${e.index} ${e.phase} on ${e.worker}`
    case 'finished':
      return `fan-out: #${e.index} ${e.status}${e.worker ? ` on ${e.worker}` : ''}${e.error ? `: ${e.error}` : ''}`
    case 'cancelling':
      return `fan-out: cancelling the others (${e.reason})`
    case 'no-worker':
      return `fan-out: no worker has taken any of the ${e.jobs} job(s) in ${e.waitedMs / 1000}s; still waiting (is a 'forkpoint worker' taking jobs from this queue? --no-worker-timeout turns this notice off)`
  }
}

/** One line of a worker's log, for stderr. */
export function describeWorkerEvent(e: WorkerEvent): string {
  switch (e.type) {
    case 'started':
      return `worker: job ${e.job} (#${e.index}) started`
    case 'finished':
      return `worker: job ${e.job} (#${e.index}) ${e.result.status}${e.result.image ? `, image ${short(e.result.image.id)}` : ''} in ${(e.result.durationMs / 1000).toFixed(2)}s`
    case 'failed':
      return `worker: job ${e.job} failed: ${e.error}`
  }
}
