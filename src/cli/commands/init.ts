import type { Command } from 'commander'
import type { InitResult } from '../../store/initStore.js'
import { type Where, common, commonFlags } from '../context.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'

/** `forkpoint init`: a store (.forkpoint/) in the workspace. */
export async function initCommand(options: Where): Promise<InitResult> {
  const { initWorkspace } = await import('../../store/initStore.js')
  return initWorkspace(options)
}

export const initView: Rendering<InitResult> = {
  human: (r) =>
    `${r.created ? 'initialized' : 'already initialized'} forkpoint store in ${r.storeDir}${r.gitignoreUpdated ? ' (added to .gitignore)' : ''}${r.gitExcludeUpdated ? ' (added to .git/info/exclude)' : ''}`,
}

export function registerInit(program: Command): void {
  common(program.command('init'))
    .description('create a store (.forkpoint/) in the workspace')
    .action(async (_opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await initCommand({ dir: flags.dir, store: flags.store }), initView)
    })
}
