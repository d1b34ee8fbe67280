import type { Command } from 'commander'
import type { Digest } from '../../objects/digest.js'
import type { GcResult } from '../../store/gc.js'
import { type Where, common, commonFlags } from '../context.js'
import { formatBytes } from '../../operations/text/format.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'
import { counted } from '../../util/plural.js'

/** What gc did: `removed` counts the objects, `removedIds` names them. */
export type GcOutput = Omit<GcResult, 'removed'> & { removed: number; removedIds: Digest[] }

/** `forkpoint gc`: old reflog entries expired, then unreachable objects removed (or, `dryRun`, only counted). */
export async function gcCommand({ dryRun, prune, ...where }: Where & { dryRun?: boolean; prune?: string }): Promise<GcOutput> {
  const { gc } = await import('../../store/gc.js')
  const result = await gc({ ...where, dryRun: dryRun ?? false, ...(prune ? { prune } : {}) })
  return { ...result, removed: result.removed.length, removedIds: result.removed }
}

export function gcView(dryRun: boolean): Rendering<GcOutput> {
  return {
    human: (r) =>
      `${dryRun ? 'would remove' : 'removed'} ${counted(r.removed, 'object')} (${formatBytes(r.freedBytes)}) and ${counted(r.expiredReflogEntries, 'reflog entry', 'reflog entries')}; ${r.kept} reachable`,
  }
}

export function registerGc(program: Command): void {
  common(program.command('gc'))
    .description('expire old reflog entries, then remove objects no ref or remaining reflog entry reaches')
    .option('-n, --dry-run', 'only report what would be removed')
    .option('--prune <age>', 'expire reflog entries older than this first: now, never, 2.weeks.ago, a date (default 90.days)')
    .action(async (opts: { dryRun?: boolean; prune?: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await gcCommand({ dir: flags.dir, store: flags.store, ...opts }), gcView(Boolean(opts.dryRun)))
    })
}
