import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { short } from '../format.js'
import { emit } from '../output.js'

export function registerUnpack(program: Command): void {
  common(program.command('unpack <FILE>'))
    .description('read a pack file into the store, verifying every object')
    .option('--tag <name>', 'local tag for the image (default: unpacked-<id>)')
    .option('--allow-external-symlinks', 'accept symlinks that point outside the tree')
    .action(async (input: string, opts: { tag?: string; allowExternalSymlinks?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { unpackImage } = await import('../../registry/unpackImage.js')
      const result = await unpackImage({ input, dir: flags.dir, store: flags.store, ...opts })
      emit(flags, result, (r) => `unpacked ${short(r.id)} as tag ${r.tag}: ${r.objects} objects, ${r.added} new`)
    })
}
