import type { FanoutEvent } from '../../fanout/queueRunner.js'
import { short } from './format.js'

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
