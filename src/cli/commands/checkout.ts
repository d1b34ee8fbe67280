import type { Command } from 'commander'
import type { CheckoutArgs, CheckoutResult } from '../../world/checkout/checkout.js'
import type { RestorePathsResult } from '../../world/checkout/restorePaths.js'
import { type Where, common, commonFlags } from '../context.js'
import { short } from '../format.js'
import { quotePath } from '../../world/diff/quotePath.js'
import { type View, print } from '../output.js'
import { progressBar } from '../progress.js'
import { counted } from '../../util/plural.js'

export type CheckoutOptions = Where & Pick<CheckoutArgs, 'id' | 'into' | 'force' | 'allowExternalSymlinks' | 'trustGit' | 'onProgress'> & { paths?: string[] }

/** `forkpoint checkout ID [-- PATH…]`: a snapshot materialized into a new directory or over the workspace, or only the paths given restored from it. */
export async function checkoutCommand({ paths, ...options }: CheckoutOptions): Promise<CheckoutResult | RestorePathsResult> {
  const { checkout } = await import('../../world/checkout/checkout.js')
  const { checkoutPaths } = await import('../../world/checkout/restorePaths.js')
  return paths?.length ? checkoutPaths({ ...options, paths }) : checkout(options)
}

export const checkoutView: View<CheckoutResult | RestorePathsResult> = {
  human: (r) =>
    r.mode === 'paths'
      ? `restored ${r.paths.map(quotePath).join(', ')} from ${short(r.id)} (${counted(r.changed, 'path')} changed, HEAD unchanged)${heldBackLines(r.heldBack, 'forkpoint checkout ID --trust-git -- PATH…')}`
      : `checked out ${short(r.id)} into ${r.target} (${counted(r.files, 'file')}${r.mode === 'in-place' ? `, ${counted(r.changed, 'path')} changed` : ''}, ${r.method})${heldBackLines(r.heldBack, 'forkpoint checkout ID --trust-git')}`,
}

/** What a checkout of another store's image did not write, and the command that would. */
export function heldBackLines(heldBack: string[], restore: string): string {
  if (heldBack.length === 0) return ''
  const shown = heldBack.slice(0, 20).map((p) => `\n  ${quotePath(p)}`)
  const more = heldBack.length > 20 ? `\n  … and ${heldBack.length - 20} more` : ''
  return `\nheld back (git config, hooks and .git files of an image from another store run code on the next git command):${shown.join('')}${more}\n  to write them: ${restore}`
}

export function registerCheckout(program: Command): void {
  common(program.command('checkout <ID> [paths...]'))
    .description('materialize a snapshot into a new directory (--into) or over the workspace; with -- PATH… restore only those files or directories from it (HEAD stays)')
    .option('--into <dir>', 'a new or empty directory to write it into')
    .option('-f, --force', 'overwrite uncommitted changes in the workspace')
    .option('--allow-external-symlinks', 'allow symlinks that point outside the tree')
    .option('--trust-git', "write an image from another store's .git/config, .git/hooks/ and .git files (held back otherwise)")
    .action(async (id: string, paths: string[], opts: { into?: string; force?: boolean; allowExternalSymlinks?: boolean; trustGit?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const bar = progressBar('checkout', flags.json)
      const result = await checkoutCommand({ id, paths, dir: flags.dir, store: flags.store, ...opts, onProgress: bar.onProgress }).finally(() => bar.stop())
      print(flags, result, checkoutView)
    })
}
