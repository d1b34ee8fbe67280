import type { Command } from 'commander'
import type { CommitResult } from '../../branch/types.js'
import { type Where, common, commonFlags } from '../context.js'
import { type View, print } from '../output.js'

/** `forkpoint commit NAME`: branch NAME applied to its parent and ended. */
export async function commitCommand({ failIfStale, ...options }: Where & { name: string; failIfStale?: boolean }): Promise<CommitResult> {
  const { commitNamedBranch } = await import('../../branch/commitNamedBranch.js')
  return commitNamedBranch({ ...options, onConflict: failIfStale ? 'fail' : 'merge' })
}

export const commitView: View<CommitResult> = { human: (r) => `committed ${r.name}: ${r.written.length} written, ${r.deleted.length} deleted (${r.durationMs.toFixed(0)} ms)` }

export function registerCommit(program: Command): void {
  common(program.command('commit <NAME>'))
    .description('apply branch NAME to its parent and end it (exit 3 on conflict)')
    .option('--fail-if-stale', 'first committer wins: refuse if a sibling committed first (BranchStaleError)')
    .action(async (name: string, opts: { failIfStale?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await commitCommand({ dir: flags.dir, store: flags.store, name, ...opts }), commitView)
    })
}
