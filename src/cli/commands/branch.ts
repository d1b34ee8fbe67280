import type { Command } from 'commander'
import { listLines } from '../../operations/text/format.js'
import type { BackendName, BranchInfo } from '../../branch/types.js'
import { UsageError } from '../../errors/index.js'
import { type Where, common, commonFlags } from '../context.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'

const BACKENDS = ['overlay', 'reflink', 'copy', 'auto']

/** `forkpoint branch NAME`: a copy-on-write branch of the workspace. */
export async function branchCommand({
  backend = 'auto',
  path,
  disk,
  ...options
}: Where & { name: string; backend?: string; path?: string | undefined; disk?: string | undefined }): Promise<BranchInfo> {
  if (!BACKENDS.includes(backend)) throw new UsageError(`unknown backend ${JSON.stringify(backend)} (overlay, reflink, copy or auto)`)
  const { makeBranch } = await import('../../branch/lifecycle/makeBranch.js')
  return makeBranch({ ...options, backend: backend as BackendName | 'auto', ...(path === undefined ? {} : { path }), ...(disk === undefined ? {} : { disk }) })
}

/** `forkpoint branch --list`: the live branches. */
export async function branchListCommand(options: Where): Promise<{ branches: BranchInfo[] }> {
  const { listBranches } = await import('../../branch/lifecycle/listBranches.js')
  return { branches: await listBranches(options) }
}

export const branchView: Rendering<BranchInfo> = { human: (b) => (b.view === 'host' ? b.path : '') }

export const branchListView: Rendering<{ branches: BranchInfo[] }> = {
  human: (r) => listLines(r.branches, (b) => `${b.name}\t${b.backend}\t${b.view === 'host' ? b.path : `(no path other tools can use: forkpoint shell ${b.name})`}`, 'no branches'),
}

export function registerBranch(program: Command): void {
  common(program.command('branch [NAME]'))
    .description('make a copy-on-write branch of the workspace and print its path (PARENT/NAME branches a branch); --list shows live ones')
    .option('--list', 'list live branches')
    .option('--backend <name>', 'overlay, reflink, copy or auto', 'auto')
    .option('--path <DIR>', 'mount the branch at DIR (empty or missing, outside the workspace) instead of inside the store')
    .option('--disk <SIZE>', "cap what the branch writes, e.g. 1G (overlay backend as root; refused elsewhere, exit 2); without it a branch's disk is not capped")
    .action(async (name: string | undefined, opts: { list?: boolean; backend: string; path?: string; disk?: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const where = { dir: flags.dir, store: flags.store }
      if (opts.list || !name) return print(flags, await branchListCommand(where), branchListView)
      const branch = await branchCommand({ ...where, name, backend: opts.backend, path: opts.path, disk: opts.disk })
      // a path only this process's namespace tricks reach would break git, node and editors: offer a shell instead
      if (branch.view === 'namespace' && !flags.json) {
        const { HOST_MOUNT_NEEDS } = await import('../../branch/backends/overlayBackend.js')
        process.stderr.write(
          `forkpoint: made branch ${branch.name}, but it cannot be mounted where other tools see it here (${HOST_MOUNT_NEEDS}); work in it with 'forkpoint shell ${branch.name}'\n`,
        )
      }
      print(flags, branch, branchView)
    })
}
