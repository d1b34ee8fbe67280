import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'

export function registerInit(program: Command): void {
  common(program.command('init'))
    .description('create a store (.forkpoint/) in the workspace')
    .action(async (_opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { initWorkspace } = await import('../../store/initStore.js')
      const result = await initWorkspace({ dir: flags.dir, store: flags.store })
      emit(flags, result, (r) => `${r.created ? 'initialized' : 'already initialized'} forkpoint store in ${r.storeDir}${r.gitignoreUpdated ? ' (added to .gitignore)' : ''}`)
    })
}
