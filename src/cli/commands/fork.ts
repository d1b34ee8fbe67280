import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'

export function registerFork(program: Command): void {
  common(program.command('fork <ID>'))
    .description('make N children of an image (refs/forks/<id>/<i>), one id per line; --materialize: also a copy-on-write branch each, id<TAB>path')
    .requiredOption('-n, --count <N>', 'how many children', (v) => Number(v))
    .option('--materialize', "also make each child a branch holding the image's files (fork-<id>-<i>)")
    .action(async (id: string, opts: { count: number; materialize?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { forkImage } = await import('../../image/forkImage.js')
      const { resolveWorkspace } = await import('../../world/snapshotWorkspace.js')
      const { store, workspace } = await resolveWorkspace({ dir: flags.dir, store: flags.store })
      const children = await forkImage({ store, id, n: opts.count, materialize: opts.materialize === true, persistent: true, dir: workspace })
      emit(flags, { children }, (r) => r.children.map((c) => (c.branch ? `${c.id}\t${c.branch.path}` : c.id)).join('\n'))
    })
}
