import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'

export function registerCommit(program: Command): void {
  common(program.command('commit <NAME>'))
    .description('apply branch NAME to its parent and end it (exit 3 on conflict)')
    .option('--fail-if-stale', 'first committer wins: refuse if a sibling committed first (BranchStaleError)')
    .action(async (name: string, opts: { failIfStale?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { commitNamedWithEffects } = await import('../../effects/branchEffects.js')
      const result = await commitNamedWithEffects({ dir: flags.dir, store: flags.store, name, onConflict: opts.failIfStale ? 'fail' : 'merge' })
      emit(flags, result, (r) => `committed ${r.name}: ${r.written.length} written, ${r.deleted.length} deleted (${r.durationMs.toFixed(0)} ms)${sentLine(r.effects)}`)
    })
}

function sentLine({ executed, handedUp }: { executed: unknown[]; handedUp: unknown[] }): string {
  if (executed.length > 0) return `; ${executed.length} deferred effect${executed.length === 1 ? '' : 's'} sent`
  return handedUp.length > 0 ? `; ${handedUp.length} deferred effect${handedUp.length === 1 ? '' : 's'} passed to the parent branch` : ''
}
