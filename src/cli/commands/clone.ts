import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { formatBytes, short } from '../format.js'
import { emit } from '../output.js'
import { transferBar } from '../transferBar.js'
import { type PullFlags, pullOptions } from './pull.js'

export function registerClone(program: Command): void {
  pullOptions(common(program.command('clone <REMOTE>')))
    .description('pull an image and materialize it in a new directory (store: --store, else INTO/.forkpoint)')
    .requiredOption('--into <dir>', 'a new or empty directory')
    .action(async (remote: string, opts: PullFlags & { into: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { cloneImage } = await import('../../registry/cloneImage.js')
      const bar = transferBar(flags.json)
      const result = await cloneImage({ remote, ...opts, ...(flags.store ? { store: flags.store } : {}), ...(bar.onProgress ? { onProgress: bar.onProgress } : {}) }).finally(() =>
        bar.stop(),
      )
      emit(flags, result, (r) =>
        [
          `cloned ${short(r.id)} from ${r.remote} into ${r.into} (${r.files} files)`,
          `  ${r.fetchedObjects} of ${r.objects} objects fetched, ${formatBytes(r.fetchedBytes)}; store ${r.storeDir}${r.head ? `, head ${r.head}` : ''}`,
        ].join('\n'),
      )
    })
}
