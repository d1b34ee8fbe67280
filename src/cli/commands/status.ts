import type { Command } from 'commander'
import type { StatusResult } from '../../world/workspace/status.js'
import { type Where, common, commonFlags } from '../context.js'
import { formatChanges, short } from '../format.js'
import { type View, print } from '../output.js'
import { commitNextSteps } from '../../branch/commit/commitInProgress.js'
import { counted } from '../../util/plural.js'

export interface StatusOptions extends Where {
  respectGitignore?: boolean
}

/** `forkpoint status`: the workspace's changes since HEAD (committed effects a crash left unsent are sent first). */
export async function statusCommand(options: StatusOptions): Promise<StatusResult> {
  const { recoverUnsent } = await import('../../effects/sendUnsent.js')
  const recovered = await recoverUnsent({ dir: options.dir, ...(options.store ? { store: options.store } : {}) })
  if (recovered) process.stderr.write(`forkpoint: ${recovered}\n`)
  // the store's running service knows from its watcher what changed
  if (options.respectGitignore === undefined) {
    const { callService } = await import('../../service/callService.js')
    const served = await callService({ dir: options.dir, store: options.store }, 'status', {})
    if (served) return served as StatusResult
  }
  const { status } = await import('../../world/workspace/status.js')
  return status(options)
}

export const statusView: View<StatusResult> = {
  human(r) {
    const where = `${r.headName ? `on ${r.headName}` : 'HEAD detached'}${r.head ? ` at ${short(r.head)}` : ' (no snapshot yet)'}`
    const merging = `${r.merge ? `\n${mergeNote(r.merge)}` : ''}${r.commit ? `\n${commitNote(r.commit)}` : ''}`
    return r.clean ? `${where}${merging}\nclean` : `${where}${merging}\n${formatChanges(r.changes)}`
  },
}

function mergeNote(merge: { theirs: string | null; conflicts: string[] }): string {
  const what = merge.theirs ? `merging ${short(merge.theirs)}` : 'merging (damaged merge state)'
  const conflicts = merge.conflicts.length > 0 ? ` with ${counted(merge.conflicts.length, 'conflict')} (${merge.conflicts.join(', ')})` : ''
  return `${what}${conflicts}: fix the files, then 'forkpoint merge --continue', or 'forkpoint merge --abort'`
}

function commitNote(commit: { branch: string; conflicts: string[] }): string {
  const n = commit.conflicts.length
  return `committing branch ${commit.branch} with ${counted(n, 'conflict')} (${commit.conflicts.join(', ')}): ${commitNextSteps(commit.branch)}`
}

export function registerStatus(program: Command): void {
  common(program.command('status'))
    .description('changes in the workspace since HEAD')
    .option('--respect-gitignore', 'also apply .gitignore files (remembered by snapshot)')
    .option('--no-respect-gitignore', 'do not apply .gitignore files')
    .action(async (opts: { respectGitignore?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await statusCommand({ dir: flags.dir, store: flags.store, ...opts }), statusView)
    })
}
