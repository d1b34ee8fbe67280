import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'

export function registerBranch(program: Command): void {
  common(program.command('branch [NAME]'))
    .description('make a copy-on-write branch of the workspace and print its path (PARENT/NAME branches a branch); --list shows live ones')
    .option('--list', 'list live branches')
    .option('--backend <name>', 'overlay, reflink, copy or auto', 'auto')
    .action(async (name: string | undefined, opts: { list?: boolean; backend: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { listBranches } = await import('../../branch/listBranches.js')
      const { makeBranch } = await import('../../branch/makeBranch.js')
      const { UsageError } = await import('../../errors/index.js')
      if (opts.list || !name) {
        const branches = await listBranches({ dir: flags.dir, store: flags.store })
        emit(flags, { branches }, (r) => r.branches.map((b) => `${b.name}\t${b.backend}\t${b.path}`).join('\n'))
        return
      }
      if (!['overlay', 'reflink', 'copy', 'auto'].includes(opts.backend)) throw new UsageError(`unknown backend ${JSON.stringify(opts.backend)} (overlay, reflink, copy or auto)`)
      const branch = await makeBranch({ dir: flags.dir, store: flags.store, name, backend: opts.backend as 'auto' })
      emit(flags, branch, (b) => b.path)
    })
}
