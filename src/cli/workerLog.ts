import type { WorkerEvent } from '../fanout/startWorker.js'
import { short } from '../operations/text/format.js'

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
