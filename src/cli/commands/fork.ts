import type { Command } from 'commander'
import type { ForkChild } from '../../image/forkImage.js'
import { type Where, common, commonFlags } from '../context.js'
import { type View, print } from '../output.js'

/** `forkpoint fork ID -n N [--materialize]`: N children of an image (refs/forks/<id>/<i>), with a persistent branch each when materialized. */
export async function forkCommand({ id, count, materialize = false, ...where }: Where & { id: string; count: number; materialize?: boolean }): Promise<{ children: ForkChild[] }> {
  const { forkImage } = await import('../../image/forkImage.js')
  return { children: await forkImage({ ...where, id, n: count, materialize, persistent: true }) }
}

export const forkView: View<{ children: ForkChild[] }> = { human: (r) => r.children.map((c) => (c.branch ? `${c.id}\t${c.branch.name}\t${c.branch.path}` : c.id)).join('\n') }

export function registerFork(program: Command): void {
  common(program.command('fork <ID>'))
    .description('make N children of an image (refs/forks/<id>/<i>), one id per line; --materialize: also a copy-on-write branch each, id<TAB>branch<TAB>path')
    .requiredOption('-n, --count <N>', 'how many children', (v) => Number(v))
    .option('--materialize', "also make each child a branch holding the image's files (fork-<id>-<i>)")
    .action(async (id: string, opts: { count: number; materialize?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await forkCommand({ dir: flags.dir, store: flags.store, id, count: opts.count, materialize: opts.materialize === true }), forkView)
    })
}
