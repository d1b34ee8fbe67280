import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'

export function registerAbort(program: Command): void {
  common(program.command('abort <NAME>'))
    .description('throw branch NAME (and its children) away, leaving nothing behind')
    .action(async (name: string, _opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { abortNamedWithEffects } = await import('../../effects/branchEffects.js')
      emit(flags, await abortNamedWithEffects({ dir: flags.dir, store: flags.store, name }), (r) => `aborted ${r.aborted}${r.dropped.length > 0 ? `; ${r.dropped.length} deferred effect${r.dropped.length === 1 ? '' : 's'} dropped` : ''}`)
    })
}
