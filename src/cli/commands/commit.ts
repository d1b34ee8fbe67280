import type { Command } from 'commander'
import type { CommitWithEffectsResult } from '../../effects/branchEffects.js'
import { UsageError } from '../../errors/index.js'
import { type Where, common, commonFlags } from '../context.js'
import { type View, print } from '../output.js'
import { counted } from '../../util/plural.js'
import { pauseAtFromEnv } from '../pauseAt.js'

export interface CommitOptions extends Where {
  name: string
  failIfStale?: boolean
  /** Finish the commit stopped on conflicts, once the files are fixed. */
  continue?: boolean
  keepLeftovers?: boolean
}

/**
 * `forkpoint commit NAME`: branch NAME applied to its parent and ended, then its deferred effects
 * sent (or handed to the parent branch). Conflicts in the workspace leave the commit in progress.
 */
export async function commitCommand({ failIfStale, continue: resume, keepLeftovers, ...options }: CommitOptions): Promise<CommitWithEffectsResult> {
  const { commitNamedWithEffects } = await import('../../effects/branchEffects.js')
  const onStep = pauseAtFromEnv(process.env)
  return commitNamedWithEffects({
    ...options,
    ...(onStep ? { onStep } : {}),
    onConflict: failIfStale ? 'fail' : 'merge',
    stopOnConflict: true,
    resume: resume ?? false,
    keepLeftovers: keepLeftovers ?? false,
  })
}

/** `forkpoint commit NAME --abort`: the commit stopped on conflicts undone, the workspace's files as they were; the branch stays. */
export async function commitAbortCommand(options: Where & { name: string }): Promise<{ name: string; restored: string[] }> {
  const { abortCommit } = await import('../../branch/commit/abortCommit.js')
  return abortCommit(options)
}

export const commitView: View<CommitWithEffectsResult> = {
  human: (r) => `committed ${r.name}: ${r.written.length} written, ${r.deleted.length} deleted (${r.durationMs.toFixed(0)} ms)${sentLine(r.effects)}`,
}

export const commitAbortView: View<{ name: string; restored: string[] }> = {
  human: (r) => `commit of ${r.name} aborted: ${counted(r.restored.length, 'file')} restored; the branch is still live`,
}

export function registerCommit(program: Command): void {
  common(program.command('commit <NAME>'))
    .description('apply branch NAME to its parent and end it (exit 3 on conflict: in the workspace, the commit stays in progress)')
    .option('--fail-if-stale', 'first committer wins: refuse if a sibling committed first (BranchStaleError)')
    .option('--continue', 'finish a commit stopped on conflicts, once the files are fixed')
    .option('--keep-leftovers', '--continue: keep the versions kept beside conflicts (NAME~LABEL) that are still there, instead of refusing')
    .option('--abort', "undo a commit stopped on conflicts: the workspace's files as they were, the branch still live")
    .action(async (name: string, opts: { failIfStale?: boolean; continue?: boolean; keepLeftovers?: boolean; abort?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const where = { dir: flags.dir, store: flags.store, name }
      if (opts.continue && opts.abort) throw new UsageError('commit: give --continue or --abort, not both')
      if (opts.abort) return print(flags, await commitAbortCommand(where), commitAbortView)
      const { abort: _abort, ...rest } = opts
      print(flags, await commitCommand({ ...where, ...rest }), commitView)
    })
}

/** What went out: the requests this commit sent (a sibling may have sent the same key already: then none). */
function sentLine({ sent, resent, executed, handedUp }: { sent: unknown[]; resent: unknown[]; executed: unknown[]; handedUp: unknown[] }): string {
  if (handedUp.length > 0) return `; ${counted(handedUp.length, 'deferred effect')} passed to the parent branch`
  const resends = resent.length > 0 ? ` (${resent.length} resent after an interrupted commit)` : ''
  if (sent.length > 0) return `; ${counted(sent.length, 'deferred effect')} sent${resends}`
  return executed.length > 0 ? `; ${counted(executed.length, 'deferred effect')} already sent, not sent again` : ''
}
