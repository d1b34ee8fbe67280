import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { formatBytes } from '../format.js'
import { emit } from '../output.js'

export function registerGc(program: Command): void {
  common(program.command('gc'))
    .description('remove objects no ref or reflog reaches')
    .option('-n, --dry-run', 'only report what would be removed')
    .action(async (opts: { dryRun?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { gc } = await import('../../store/gc.js')
      const { resolveWorkspace } = await import('../../world/snapshotWorkspace.js')
      const { store } = await resolveWorkspace({ dir: flags.dir, store: flags.store })
      const result = await gc({ store, dryRun: opts.dryRun ?? false })
      emit(flags, { ...result, removed: result.removed.length, removedIds: result.removed }, (r) =>
        `${opts.dryRun ? 'would remove' : 'removed'} ${r.removed} objects (${formatBytes(r.freedBytes)}); ${r.kept} reachable`,
      )
    })
}
