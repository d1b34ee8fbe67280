import { OfflineViolationError, ReplayDivergenceError } from '../../errors/index.js'
import type { DivergenceEntry, JournalEntry, OfflineEntry } from './journal.js'

/** Divergences (a call not in the recording) and blocked network attempts reported by the agent's processes. */
export function failOnJournalEvents(entries: JournalEntry[]): void {
  const divergence = entries.find((e): e is DivergenceEntry => e.t === 'divergence')
  if (divergence) throw new ReplayDivergenceError(divergence.message, { step: divergence.step.name, expected: divergence.expected ?? null })
  const offline = entries.find((e): e is OfflineEntry => e.t === 'offline')
  if (offline) throw new OfflineViolationError(`${offline.message} (the agent tried to reach the network during an offline replay)`, { target: offline.target })
}
