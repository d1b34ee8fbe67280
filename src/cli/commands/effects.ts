import type { Command } from 'commander'
import type { EffectsListing } from '../../effects/listEffects.js'
import { type Where, common, commonFlags } from '../context.js'
import { type View, print } from '../output.js'
import { renderEffects } from '../renderEffects.js'

/** `forkpoint effects [ID] [--pending]`: the effects ledger of an image, a live branch or the workspace. */
export async function effectsCommand({ id, pending = false, ...where }: Where & { id?: string | undefined; pending?: boolean }): Promise<EffectsListing> {
  const { listEffects } = await import('../../effects/listEffects.js')
  return listEffects({ ...where, ...(id === undefined ? {} : { id }), pending })
}

export function effectsView(pending: boolean): View<EffectsListing> {
  return { human: (r) => renderEffects(r, pending) }
}

export function registerEffects(program: Command): void {
  common(program.command('effects [ID]'))
    .description('list the effects ledger of an image, a live branch or (default) the workspace; --pending: only the outbox')
    .option('--pending', 'only the deferred effects waiting for a commit (the outbox)')
    .action(async (id: string | undefined, opts: { pending?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await effectsCommand({ dir: flags.dir, store: flags.store, id, pending: Boolean(opts.pending) }), effectsView(Boolean(opts.pending)))
    })
}
