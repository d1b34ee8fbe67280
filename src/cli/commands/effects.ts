import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'

export function registerEffects(program: Command): void {
  common(program.command('effects [ID]'))
    .description("list the effects ledger of an image, a live branch or (default) the workspace; --pending: only the outbox")
    .option('--pending', 'only the deferred effects waiting for a commit (the outbox)')
    .action(async (id: string | undefined, opts: { pending?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { listEffects } = await import('../../effects/listEffects.js')
      const { renderEffects } = await import('../renderEffects.js')
      const listing = await listEffects({ dir: flags.dir, ...(flags.store ? { store: flags.store } : {}), ...(id === undefined ? {} : { id }), pending: Boolean(opts.pending) })
      emit(flags, listing, (r) => renderEffects(r, Boolean(opts.pending)))
    })
}
