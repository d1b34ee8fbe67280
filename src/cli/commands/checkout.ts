import type { Command } from 'commander'
import type { CheckoutArgs, CheckoutResult } from '../../world/checkout.js'
import { type Where, common, commonFlags } from '../context.js'
import { short } from '../format.js'
import { type View, print } from '../output.js'
import { progressBar } from '../progress.js'

export type CheckoutOptions = Where & Pick<CheckoutArgs, 'id' | 'into' | 'force' | 'allowExternalSymlinks' | 'onProgress'>

/** `forkpoint checkout ID`: a snapshot materialized into a new directory or over the workspace. */
export async function checkoutCommand(options: CheckoutOptions): Promise<CheckoutResult> {
  const { checkout } = await import('../../world/checkout.js')
  return checkout(options)
}

export const checkoutView: View<CheckoutResult> = {
  human: (r) => `checked out ${short(r.id)} into ${r.target} (${r.files} files${r.mode === 'in-place' ? `, ${r.changed} paths changed` : ''}, ${r.method})`,
}

export function registerCheckout(program: Command): void {
  common(program.command('checkout <ID>'))
    .description('materialize a snapshot into a new directory (--into) or over the workspace')
    .option('--into <dir>', 'a new or empty directory to write it into')
    .option('-f, --force', 'overwrite uncommitted changes in the workspace')
    .option('--allow-external-symlinks', 'allow symlinks that point outside the tree')
    .action(async (id: string, opts: { into?: string; force?: boolean; allowExternalSymlinks?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const bar = progressBar('checkout', flags.json)
      const result = await checkoutCommand({ id, dir: flags.dir, store: flags.store, ...opts, onProgress: bar.onProgress }).finally(() => bar.stop())
      print(flags, result, checkoutView)
    })
}
