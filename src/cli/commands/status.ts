import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { formatChanges, short } from '../format.js'
import { emit } from '../output.js'

export function registerStatus(program: Command): void {
  common(program.command('status'))
    .description('changes in the workspace since HEAD')
    .option('--respect-gitignore', 'also apply .gitignore files (remembered by snapshot)')
    .option('--no-respect-gitignore', 'do not apply .gitignore files')
    .action(async (opts: { respectGitignore?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { status } = await import('../../world/status.js')
      const result = await status({ dir: flags.dir, store: flags.store, ...opts })
      emit(flags, result, (r) => {
        const where = `${r.headName ? `on ${r.headName}` : 'HEAD detached'}${r.head ? ` at ${short(r.head)}` : ' (no snapshot yet)'}`
        const merging = r.merge ? `\n${mergeNote(r.merge)}` : ''
        return r.clean ? `${where}${merging}\nclean` : `${where}${merging}\n${formatChanges(r.changes)}`
      })
    })
}

function mergeNote(merge: { theirs: string | null; conflicts: string[] }): string {
  const what = merge.theirs ? `merging ${short(merge.theirs)}` : 'merging (damaged merge state)'
  const conflicts = merge.conflicts.length > 0 ? ` with ${merge.conflicts.length} conflict${merge.conflicts.length === 1 ? '' : 's'} (${merge.conflicts.join(', ')})` : ''
  return `${what}${conflicts}: fix the files, then 'forkpoint merge --continue', or 'forkpoint merge --abort'`
}
