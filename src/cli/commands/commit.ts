import type { Command } from 'commander'
import type { CommitWithEffectsResult } from '../../effects/branchEffects.js'
import { type Where, common, commonFlags } from '../context.js'
import { type View, print } from '../output.js'
import { counted } from '../../util/plural.js'

/** `forkpoint commit NAME`: branch NAME applied to its parent and ended, then its deferred effects sent (or handed to the parent branch). */
export async function commitCommand({ failIfStale, ...options }: Where & { name: string; failIfStale?: boolean }): Promise<CommitWithEffectsResult> {
  const { commitNamedWithEffects } = await import('../../effects/branchEffects.js')
  return commitNamedWithEffects({ ...options, onConflict: failIfStale ? 'fail' : 'merge' })
}

export const commitView: View<CommitWithEffectsResult> = {
  human: (r) => `committed ${r.name}: ${r.written.length} written, ${r.deleted.length} deleted (${r.durationMs.toFixed(0)} ms)${sentLine(r.effects)}`,
}

export function registerCommit(program: Command): void {
  common(program.command('commit <NAME>'))
    .description('apply branch NAME to its parent and end it (exit 3 on conflict)')
    .option('--fail-if-stale', 'first committer wins: refuse if a sibling committed first (BranchStaleError)')
    .action(async (name: string, opts: { failIfStale?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await commitCommand({ dir: flags.dir, store: flags.store, name, ...opts }), commitView)
    })
}

function sentLine({ executed, handedUp }: { executed: unknown[]; handedUp: unknown[] }): string {
  if (executed.length > 0) return `; ${counted(executed.length, 'deferred effect')} sent`
  return handedUp.length > 0 ? `; ${counted(handedUp.length, 'deferred effect')} passed to the parent branch` : ''
}
