import type { Command } from 'commander'
import type { PullResult } from '../../registry/transfer/pullImage.js'
import type { ProgressListener } from '../../registry/transport/TransferProgress.js'
import { type Where, common, commonFlags } from '../context.js'
import { formatBytes, short } from '../../operations/text/format.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'
import { transferBar } from '../transferBar.js'
import { counted } from '../../util/plural.js'

export interface PullFlags {
  tag?: string
  verifyKey?: string
  insecure?: boolean
  allowExternalSymlinks?: boolean
}

/** The options pull and clone share; both fetch over HTTPS from this process. */
export function pullOptions(cmd: Command): Command {
  return cmd
    .option('--tag <name>', 'local tag for the image (default: the remote tag)')
    .option('--verify-key <key>', 'refuse the image unless signed by this Ed25519 public key (PEM file or text)')
    .option('--insecure', 'plain HTTP to a registry that is not on loopback')
    .option('--allow-external-symlinks', 'accept symlinks that point outside the tree')
}

/** `forkpoint pull REMOTE`: an image fetched into the store; `onProgress` hears the transfer as it goes. */
export async function pullCommand(options: Where & PullFlags & { remote: string; onProgress?: ProgressListener }): Promise<PullResult> {
  const { pullImage } = await import('../../registry/transfer/pullImage.js')
  return pullImage(options)
}

export const pullView: Rendering<PullResult> = {
  human: (r) =>
    [
      `pulled ${short(r.id)} from ${r.remote} as tag ${r.tag}${r.verified ? ' (signature verified)' : ''}`,
      `  ${r.fetchedObjects} of ${counted(r.objects, 'object')} fetched, ${formatBytes(r.fetchedBytes)} of ${formatBytes(r.totalBytes)}`,
    ].join('\n'),
}

export function registerPull(program: Command): void {
  pullOptions(common(program.command('pull <REMOTE>')))
    .description('fetch an image from a remote into the store (REMOTE[:TAG] or REMOTE@DIGEST); only missing objects travel')
    .action(async (remote: string, opts: PullFlags, cmd: Command) => {
      const flags = commonFlags(cmd)
      const bar = transferBar(flags.json)
      const result = await pullCommand({ remote, dir: flags.dir, store: flags.store, ...opts, ...(bar.onProgress ? { onProgress: bar.onProgress } : {}) }).finally(() => bar.stop())
      print(flags, result, pullView)
    })
}
