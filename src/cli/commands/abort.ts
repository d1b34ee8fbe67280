import type { Command } from 'commander'
import { type Where, common, commonFlags } from '../context.js'
import { type View, print } from '../output.js'

export interface AbortResult {
  aborted: string
}

/** `forkpoint abort NAME`: branch NAME (and its children) thrown away. */
export async function abortCommand(options: Where & { name: string }): Promise<AbortResult> {
  const { abortNamedBranch } = await import('../../branch/abortNamedBranch.js')
  return abortNamedBranch(options)
}

export const abortView: View<AbortResult> = { human: (r) => `aborted ${r.aborted}` }

export function registerAbort(program: Command): void {
  common(program.command('abort <NAME>'))
    .description('throw branch NAME (and its children) away, leaving nothing behind')
    .action(async (name: string, _opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await abortCommand({ dir: flags.dir, store: flags.store, name }), abortView)
    })
}
