import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { formatBytes } from '../format.js'
import { emit } from '../output.js'
import { renderImage } from '../renderImage.js'

export function registerShow(program: Command): void {
  common(program.command('show <ID>'))
    .description('show an object: an image layer by layer (world, env, trace, other layers), a tree, run, ... (ids may be short)')
    .action(async (id: string, _opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { describeObject } = await import('../../image/describeImage.js')
      const { openStore } = await import('../../store/findStore.js')
      const { store } = await openStore({ dir: flags.dir, store: flags.store })
      const shown = await describeObject({ store, id })
      emit(flags, shown, (r) => {
        if (r.kind === 'snapshot' && 'world' in r) return renderImage(r)
        return 'object' in r ? `${r.kind} ${r.id}\n${JSON.stringify(r.object, null, 2)}` : `blob ${r.id} (${formatBytes(r.size)})`
      })
    })
}
