import type { EffectsListing } from '../effects/listEffects.js'
import { pc } from './output.js'
import { counted } from '../util/plural.js'

/** `forkpoint effects`: a header naming the ledger, then one line per entry (seq, status, class, tool, key). */
export function renderEffects({ source, ledger, entries }: EffectsListing, pending: boolean): string {
  const what = pending ? 'outbox' : 'ledger'
  if (!ledger) return `${source}: no ${what} yet`
  if (entries.length === 0) return `${source}: ${what} ${ledger.slice(0, 19)}: ${pending ? 'nothing pending' : 'empty'}`
  const lines = entries.map((e) => `  #${e.seq}  ${status(e.status)}  ${e.class.padEnd(12)}  ${e.tool}  key ${e.idempotencyKey}`)
  return [`${source}: ${what} ${ledger.slice(0, 19)}, ${counted(entries.length, 'entry', 'entries')}`, ...lines].join('\n')
}

function status(s: string): string {
  const padded = s.padEnd(8)
  return s === 'executed' ? pc.green(padded) : s === 'deferred' ? pc.yellow(padded) : pc.dim(padded)
}
