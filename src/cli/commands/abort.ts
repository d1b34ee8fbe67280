import type { Command } from 'commander'
import type { LedgerEntry } from '../../objects/Ledger.js'
import { type Where, common, commonFlags } from '../context.js'
import { type View, print } from '../output.js'
import { counted } from '../../util/plural.js'

export interface AbortResult {
  aborted: string
  /** the deferred effects of its outbox (and its children's), recorded dropped: never sent */
  dropped: LedgerEntry[]
  /** Outboxes that failed verification, discarded unsent: one line each. */
  discarded: string[]
}

/** `forkpoint abort NAME`: branch NAME (and its children) thrown away, their deferred effects dropped. */
export async function abortCommand(options: Where & { name: string }): Promise<AbortResult> {
  const { abortNamedWithEffects } = await import('../../effects/branchEffects.js')
  return abortNamedWithEffects(options)
}

export const abortView: View<AbortResult> = {
  human: (r) =>
    [`aborted ${r.aborted}${r.dropped.length > 0 ? `; ${counted(r.dropped.length, 'deferred effect')} dropped` : ''}`, ...r.discarded.map((d) => `warning: ${d}`)].join('\n'),
}

export function registerAbort(program: Command): void {
  common(program.command('abort <NAME>'))
    .description('throw branch NAME (and its children) away, leaving nothing behind')
    .action(async (name: string, _opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await abortCommand({ dir: flags.dir, store: flags.store, name }), abortView)
    })
}
