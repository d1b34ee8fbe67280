import type { Command } from 'commander'
import type { ImageDescription } from '../../image/describeImage.js'
import type { ShownObject } from '../../store/showObject.js'
import { type Where, common, commonFlags } from '../context.js'
import { formatBytes } from '../format.js'
import { type View, print } from '../output.js'
import { renderImage } from '../renderImage.js'

/** `forkpoint show ID`: an image layer by layer, any other object as it is stored. */
export async function showCommand({ id, ...where }: Where & { id: string }): Promise<ImageDescription | ShownObject> {
  const { describeObject } = await import('../../image/describeImage.js')
  return describeObject({ ...where, id })
}

export const showView: View<ImageDescription | ShownObject> = {
  human(r) {
    if (r.kind === 'snapshot' && 'world' in r) return renderImage(r)
    return 'object' in r ? `${r.kind} ${r.id}\n${JSON.stringify(r.object, null, 2)}` : `blob ${r.id} (${formatBytes(r.size)})`
  },
}

export function registerShow(program: Command): void {
  common(program.command('show <ID>'))
    .description('show an object: an image layer by layer (world, env, trace, other layers), a tree, run, ... (ids may be short)')
    .action(async (id: string, _opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await showCommand({ dir: flags.dir, store: flags.store, id }), showView)
    })
}
