import type { Command } from 'commander'
import type { UnpackResult } from '../../registry/pack/unpackImage.js'
import { type Where, common, commonFlags } from '../context.js'
import { short } from '../../operations/text/format.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'
import { counted } from '../../util/plural.js'

/** `forkpoint unpack FILE`: a pack file read into the store, every object verified. */
export async function unpackCommand(options: Where & { input: string; tag?: string; allowExternalSymlinks?: boolean }): Promise<UnpackResult> {
  const { unpackImage } = await import('../../registry/pack/unpackImage.js')
  return unpackImage(options)
}

export const unpackView: Rendering<UnpackResult> = { human: (r) => `unpacked ${short(r.id)} as tag ${r.tag}: ${counted(r.objects, 'object')}, ${r.added} new` }

export function registerUnpack(program: Command): void {
  common(program.command('unpack <FILE>'))
    .description('read a pack file into the store, verifying every object')
    .option('--tag <name>', 'local tag for the image (default: unpacked-<id>)')
    .option('--allow-external-symlinks', 'accept symlinks that point outside the tree')
    .action(async (input: string, opts: { tag?: string; allowExternalSymlinks?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await unpackCommand({ input, dir: flags.dir, store: flags.store, ...opts }), unpackView)
    })
}
