import type { EffectsListing } from '../../effects/listEffects.js'
import type { SentEffects } from '../../effects/sendUnsent.js'
import { pc } from './colors.js'
import { counted } from '../../util/plural.js'

/** Which entries `forkpoint effects` lists: all, the outbox (`--pending`), or those resent after an uncertain attempt (`--uncertain`). */
export type EffectsFilter = 'all' | 'pending' | 'uncertain'

const NAMES: Record<EffectsFilter, { what: string; none: string }> = {
  all: { what: 'ledger', none: 'empty' },
  pending: { what: 'outbox', none: 'nothing pending' },
  uncertain: { what: 'ledger', none: 'no effect was resent after an uncertain attempt' },
}

/** `forkpoint effects`: a header naming the ledger, then one line per entry (seq, status, class, tool, key). */
export function renderEffects({ source, ledger, entries }: EffectsListing, filter: EffectsFilter): string {
  const { what, none } = NAMES[filter]
  if (!ledger) return `${source}: no ${what} yet`
  if (entries.length === 0) return `${source}: ${what} ${ledger.slice(0, 19)}: ${none}`
  const lines = entries.map((e) => `  #${e.seq}  ${status(e.status)}  ${e.class.padEnd(12)}  ${e.tool}  key ${e.idempotencyKey}`)
  const header = `${source}: ${what} ${ledger.slice(0, 19)}, ${counted(entries.length, 'entry', 'entries')}${filter === 'uncertain' ? ' resent after an uncertain attempt (a service ignoring Idempotency-Key may have had them twice)' : ''}`
  return [header, ...lines].join('\n')
}

/** `forkpoint effects recover`: what was sent, and how many of those were resends of an uncertain attempt. */
export function renderRecovered({ sent, resent }: SentEffects): string {
  if (sent.length === 0) return 'nothing to send: no committed effect is waiting'
  const uncertain = resent.length > 0 ? ` (${resent.length} resent after an uncertain attempt: see 'forkpoint effects --uncertain')` : ''
  return `${counted(sent.length, 'deferred effect')} sent${uncertain}`
}

function status(s: string): string {
  const padded = s.padEnd(8)
  return s === 'executed' ? pc.green(padded) : s === 'deferred' || s === 'sending' ? pc.yellow(padded) : pc.dim(padded)
}
