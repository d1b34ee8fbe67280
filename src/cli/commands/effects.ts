import type { Command } from 'commander'
import type { EffectsListing } from '../../effects/listEffects.js'
import type { SentEffects } from '../../effects/sendUnsent.js'
import { UsageError } from '../../errors/index.js'
import { type Where, common, commonFlags } from '../context.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'
import { type EffectsFilter, renderEffects, renderRecovered } from '../renderEffects.js'

/** `forkpoint effects [ID] [--pending | --uncertain]`: the effects ledger of an image, a live branch or the workspace. */
export async function effectsCommand({ id, filter = 'all', ...where }: Where & { id?: string | undefined; filter?: EffectsFilter }): Promise<EffectsListing> {
  const { listEffects } = await import('../../effects/listEffects.js')
  return listEffects({ ...where, ...(id === undefined ? {} : { id }), pending: filter === 'pending', uncertain: filter === 'uncertain', env: process.env })
}

/** `forkpoint effects recover`: send what a commit left unsent (a crash), with the same Idempotency-Key. */
export async function effectsRecoverCommand(where: Where): Promise<SentEffects> {
  const { sendUnsent } = await import('../../effects/sendUnsent.js')
  return sendUnsent({ ...where, always: true, env: process.env })
}

export function effectsView(filter: EffectsFilter): Rendering<EffectsListing> {
  return { human: (r) => renderEffects(r, filter) }
}

export const effectsRecoverView: Rendering<SentEffects> = { human: renderRecovered }

export function registerEffects(program: Command): void {
  const effects = common(program.command('effects [ID]'))
    .description('list the effects ledger of an image, a live branch or (default) the workspace; --pending: only the outbox')
    .option('--pending', 'only the deferred effects waiting to be sent (the outbox)')
    .option('--uncertain', 'only effects resent after an attempt whose outcome was unknown (a service ignoring Idempotency-Key may have had them twice)')
    .action(async (id: string | undefined, opts: { pending?: boolean; uncertain?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      if (opts.pending && opts.uncertain) throw new UsageError('effects: give --pending or --uncertain, not both')
      const filter: EffectsFilter = opts.pending ? 'pending' : opts.uncertain ? 'uncertain' : 'all'
      print(flags, await effectsCommand({ dir: flags.dir, store: flags.store, id, filter }), effectsView(filter))
    })
  common(effects.command('recover'))
    .description("send the committed effects a crash left unsent (the same Idempotency-Key, the agent's headers) and record their answers")
    .action(async (_opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await effectsRecoverCommand({ dir: flags.dir, store: flags.store }), effectsRecoverView)
    })
}
