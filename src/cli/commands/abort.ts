import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'

export function registerAbort(program: Command): void {
  common(program.command('abort <NAME>'))
    .description('throw branch NAME (and its children) away, leaving nothing behind')
    .action(async (name: string, _opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { abortNamedBranch } = await import('../../branch/abortNamedBranch.js')
      emit(flags, await abortNamedBranch({ dir: flags.dir, store: flags.store, name }), (r) => `aborted ${r.aborted}`)
    })
}
