import type { Command } from 'commander'
import type { ForkChild } from '../../image/forkImage.js'
import { type Where, common, commonFlags, storeAt } from '../context.js'
import { type View, print } from '../output.js'

/** `forkpoint fork ID -n N`: N children of an image (refs/forks/<id>/<i>). */
export async function forkCommand({ id, count, ...where }: Where & { id: string; count: number }): Promise<{ children: ForkChild[] }> {
  const { forkImage } = await import('../../image/forkImage.js')
  const store = await storeAt(where)
  return { children: await forkImage({ store, id, n: count }) }
}

export const forkView: View<{ children: ForkChild[] }> = { human: (r) => r.children.map((c) => c.id).join('\n') }

export function registerFork(program: Command): void {
  common(program.command('fork <ID>'))
    .description('make N children of an image (refs/forks/<id>/<i>), one id per line')
    .requiredOption('-n, --count <N>', 'how many children', (v) => Number(v))
    .action(async (id: string, opts: { count: number }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await forkCommand({ dir: flags.dir, store: flags.store, id, count: opts.count }), forkView)
    })
}
