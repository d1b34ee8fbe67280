import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'

export function registerCommit(program: Command): void {
  common(program.command('commit <NAME>'))
    .description('apply branch NAME to its parent and end it (exit 3 on conflict)')
    .option('--fail-if-stale', 'first committer wins: refuse if a sibling committed first (BranchStaleError)')
    .action(async (name: string, opts: { failIfStale?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { commitNamedBranch } = await import('../../branch/commitNamedBranch.js')
      const result = await commitNamedBranch({ dir: flags.dir, store: flags.store, name, onConflict: opts.failIfStale ? 'fail' : 'merge' })
      emit(flags, result, (r) => `committed ${r.name}: ${r.written.length} written, ${r.deleted.length} deleted (${r.durationMs.toFixed(0)} ms)`)
    })
}
