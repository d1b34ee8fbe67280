import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'

export function registerFork(program: Command): void {
  common(program.command('fork <ID>'))
    .description('make N children of an image (refs/forks/<id>/<i>), one id per line')
    .requiredOption('-n, --count <N>', 'how many children', (v) => Number(v))
    .action(async (id: string, opts: { count: number }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { forkImage } = await import('../../image/forkImage.js')
      const { openStore } = await import('../../store/findStore.js')
      const { store } = await openStore({ dir: flags.dir, store: flags.store })
      const children = await forkImage({ store, id, n: opts.count })
      emit(flags, { children }, (r) => r.children.map((c) => c.id).join('\n'))
    })
}
