import type { Command } from 'commander'
import type { PackResult } from '../../registry/pack/packImage.js'
import { type Where, common, commonFlags } from '../context.js'
import { formatBytes, short } from '../../operations/text/format.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'
import { counted } from '../../util/plural.js'

/** `forkpoint pack ID -o FILE`: an image as one file (the pack a push sends, with a header); the same image gives the same bytes. */
export async function packCommand({ level, depth, ...options }: Where & { id: string; output: string; level?: number; depth?: number }): Promise<PackResult> {
  const { packImage } = await import('../../registry/pack/packImage.js')
  return packImage({ ...options, ...(level ? { level } : {}), ...(depth !== undefined ? { depth } : {}) })
}

export const packView: Rendering<PackResult> = {
  human: (r) => `packed ${short(r.id)} into ${r.output}: ${counted(r.objects, 'object')}, ${formatBytes(r.bytes)} -> ${formatBytes(r.packBytes)}`,
}

export function registerPack(program: Command): void {
  common(program.command('pack <ID>'))
    .description('write an image as one file (the pack a push sends, with a header); the same image gives the same bytes')
    .requiredOption('-o, --output <file>', 'the pack file to write')
    .option('--level <n>', 'zstd level 1-19', (v) => Number.parseInt(v, 10))
    .option('--depth <n>', 'only N snapshots of history (1: no parents)', (v) => Number(v))
    .action(async (id: string, opts: { output: string; level?: number; depth?: number }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await packCommand({ id, dir: flags.dir, store: flags.store, ...opts }), packView)
    })
}
