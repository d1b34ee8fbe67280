import type { Command } from 'commander'
import { resolve } from 'node:path'
import type { CloneResult } from '../../registry/transfer/cloneImage.js'
import type { ProgressListener } from '../../registry/transport/TransferProgress.js'
import { type Where, common, commonFlags } from '../context.js'
import { formatBytes, short } from '../../operations/text/format.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'
import { transferBar } from '../transferBar.js'
import { heldBackLines } from '../../operations/text/heldBackLines.js'
import { counted } from '../../util/plural.js'

export interface PullFlags {
  tag?: string
  verifyKey?: string
  insecure?: boolean
  allowExternalSymlinks?: boolean
}

/** The options clone shares with pull's (the operation table's): it fetches over HTTPS from this process. */
export function pullOptions(cmd: Command): Command {
  return cmd
    .option('--tag <name>', 'local tag for the image (default: the remote tag)')
    .option('--verify-key <key>', 'refuse the image unless signed by this Ed25519 public key (PEM file or text)')
    .option('--insecure', 'plain HTTP to a registry that is not on loopback')
    .option('--allow-external-symlinks', 'accept symlinks that point outside the tree')
}

/** `forkpoint clone REMOTE --into DIR`: an image pulled and materialized in a new directory (store: `store`, else INTO/.forkpoint). */
export async function cloneCommand({
  dir,
  store,
  into,
  ...options
}: Where & PullFlags & { remote: string; into: string; trustGit?: boolean; onProgress?: ProgressListener }): Promise<CloneResult> {
  const { cloneImage } = await import('../../registry/transfer/cloneImage.js')
  return cloneImage({ ...options, into: resolve(dir, into), ...(store ? { store } : {}) })
}

export const cloneView: Rendering<CloneResult> = {
  human: (r) =>
    [
      `cloned ${short(r.id)} from ${r.remote} into ${r.into} (${counted(r.files, 'file')})`,
      `  ${r.fetchedObjects} of ${counted(r.objects, 'object')} fetched, ${formatBytes(r.fetchedBytes)}; store ${r.storeDir}${r.head ? `, head ${r.head}` : ''}${heldBackLines(r.heldBack, `forkpoint -C ${r.into} checkout ${short(r.id)} --trust-git --force`)}`,
    ].join('\n'),
}

export function registerClone(program: Command): void {
  pullOptions(common(program.command('clone <REMOTE>')))
    .description('pull an image and materialize it in a new directory (store: --store, else INTO/.forkpoint)')
    .requiredOption('--into <dir>', 'a new or empty directory')
    .option('--trust-git', "write the image's .git/config, .git/hooks/ and .git files (held back otherwise)")
    .action(async (remote: string, opts: PullFlags & { into: string; trustGit?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const bar = transferBar(flags.json)
      const result = await cloneCommand({ remote, dir: flags.dir, store: flags.store, ...opts, ...(bar.onProgress ? { onProgress: bar.onProgress } : {}) }).finally(() =>
        bar.stop(),
      )
      print(flags, result, cloneView)
    })
}
