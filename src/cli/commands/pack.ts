import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { formatBytes, short } from '../format.js'
import { emit } from '../output.js'

export function registerPack(program: Command): void {
  common(program.command('pack <ID>'))
    .description('write an image as one file (the pack a push sends, with a header); the same image gives the same bytes')
    .requiredOption('-o, --output <file>', 'the pack file to write')
    .option('--level <n>', 'zstd level 1-19', (v) => Number.parseInt(v, 10))
    .option('--depth <n>', 'only N snapshots of history (1: no parents)', (v) => Number(v))
    .action(async (id: string, opts: { output: string; level?: number; depth?: number }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { packImage } = await import('../../registry/packImage.js')
      const result = await packImage({ id, output: opts.output, dir: flags.dir, store: flags.store, ...(opts.level ? { level: opts.level } : {}), ...(opts.depth !== undefined ? { depth: opts.depth } : {}) })
      emit(flags, result, (r) => `packed ${short(r.id)} into ${r.output}: ${r.objects} objects, ${formatBytes(r.bytes)} -> ${formatBytes(r.packBytes)}`)
    })
}
