import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { formatBytes } from '../format.js'
import { emit } from '../output.js'

export function registerGc(program: Command): void {
  common(program.command('gc'))
    .description('expire old reflog entries, then remove objects no ref or remaining reflog entry reaches')
    .option('-n, --dry-run', 'only report what would be removed')
    .option('--prune <age>', 'expire reflog entries older than this first: now, never, 2.weeks.ago, a date (default 90.days)')
    .action(async (opts: { dryRun?: boolean; prune?: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { gc } = await import('../../store/gc.js')
      const { openStore } = await import('../../store/findStore.js')
      const { store } = await openStore({ dir: flags.dir, store: flags.store })
      const result = await gc({ store, dryRun: opts.dryRun ?? false, ...(opts.prune ? { prune: opts.prune } : {}) })
      emit(flags, { ...result, removed: result.removed.length, removedIds: result.removed }, (r) =>
        `${opts.dryRun ? 'would remove' : 'removed'} ${r.removed} objects (${formatBytes(r.freedBytes)}) and ${r.expiredReflogEntries} reflog entries; ${r.kept} reachable`,
      )
    })
}
