import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'

export function registerBranch(program: Command): void {
  common(program.command('branch [NAME]'))
    .description('make a copy-on-write branch of the workspace and print its path (PARENT/NAME branches a branch); --list shows live ones')
    .option('--list', 'list live branches')
    .option('--backend <name>', 'overlay, reflink, copy or auto', 'auto')
    .option('--path <DIR>', 'mount the branch at DIR (empty or missing, outside the workspace) instead of inside the store')
    .action(async (name: string | undefined, opts: { list?: boolean; backend: string; path?: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { listBranches } = await import('../../branch/listBranches.js')
      const { makeBranch } = await import('../../branch/makeBranch.js')
      const { UsageError } = await import('../../errors/index.js')
      const { HOST_MOUNT_NEEDS } = await import('../../branch/backends/overlayBackend.js')
      if (opts.list || !name) {
        const branches = await listBranches({ dir: flags.dir, store: flags.store })
        emit(flags, { branches }, (r) => r.branches.map((b) => `${b.name}\t${b.backend}\t${b.view === 'host' ? b.path : `(no path other tools can use: forkpoint shell ${b.name})`}`).join('\n'))
        return
      }
      if (!['overlay', 'reflink', 'copy', 'auto'].includes(opts.backend)) throw new UsageError(`unknown backend ${JSON.stringify(opts.backend)} (overlay, reflink, copy or auto)`)
      const branch = await makeBranch({ dir: flags.dir, store: flags.store, name, backend: opts.backend as 'auto', ...(opts.path === undefined ? {} : { path: opts.path }) })
      // a path only this process's namespace tricks reach would break git, node and editors: offer a shell instead
      if (branch.view === 'namespace' && !flags.json) process.stderr.write(`forkpoint: made branch ${branch.name}, but it cannot be mounted where other tools see it here (${HOST_MOUNT_NEEDS}); work in it with 'forkpoint shell ${branch.name}'\n`)
      emit(flags, branch, (b) => (b.view === 'host' ? b.path : ''))
    })
}
