import type { Command } from 'commander'
import type { PushResult } from '../../registry/transfer/pushImage.js'
import type { ProgressListener } from '../../registry/transport/TransferProgress.js'
import { type Where, common, commonFlags } from '../context.js'
import { formatBytes, short } from '../../operations/text/format.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'
import { transferBar } from '../transferBar.js'
import { counted } from '../../util/plural.js'

export interface PushOptions extends Where {
  id: string
  remote: string
  /** sign with the key in $FORKPOINT_SIGNING_KEY */
  sign?: boolean
  insecure?: boolean
  /** send the whole image as one new pack */
  repack?: boolean
  /** history only this many snapshots deep (1: no parents) */
  depth?: number
  onProgress?: ProgressListener
}

/** `forkpoint push ID REMOTE`: an image sent to a remote; `onProgress` hears the transfer as it goes. */
export async function pushCommand({ sign, insecure, repack, depth, onProgress, ...options }: PushOptions): Promise<PushResult> {
  const { pushImage } = await import('../../registry/transfer/pushImage.js')
  const { signingKeyFromEnv } = await import('../../registry/signing/signingKeys.js')
  return pushImage({
    ...options,
    insecure: insecure ?? false,
    ...(sign ? { signingKey: signingKeyFromEnv() } : {}),
    ...(repack ? { repack: true } : {}),
    ...(depth !== undefined ? { depth } : {}),
    ...(onProgress ? { onProgress } : {}),
  })
}

export const pushView: Rendering<PushResult> = {
  human: (r) =>
    [
      `pushed ${short(r.id)} to ${r.remote}${r.tag === null ? `@${r.manifest}` : `:${r.tag}`}${r.signed ? ' (signed)' : ''}`,
      `  ${r.sentObjects} of ${counted(r.objects, 'object')} sent: ${formatBytes(r.sentBytes)} with the manifests, for an image of ${formatBytes(r.totalBytes)} in ${counted(r.packs, 'pack')}${r.repacked ? ' (repacked)' : ''}${r.shallow.length > 0 ? ', shallow' : ''}`,
      `  manifest ${r.manifest}`,
    ].join('\n'),
}

export function registerPush(program: Command): void {
  common(program.command('push <ID> <REMOTE>'))
    .description('send an image to a remote (file:///dir, oci://host/repo[:tag], s3://bucket/prefix[:tag]); only missing objects travel')
    .option('--sign', 'add an Ed25519 signature (key: PEM text or file in $FORKPOINT_SIGNING_KEY)')
    .option('--insecure', 'plain HTTP to a registry that is not on loopback')
    .option('--repack', 'send the whole image as one new pack (an image spanning more than 16 packs is repacked anyway)')
    .option('--depth <n>', 'send the snapshot with only N snapshots of history (1: no parents)', (v) => Number(v))
    .action(async (id: string, remote: string, opts: { sign?: boolean; insecure?: boolean; repack?: boolean; depth?: number }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const bar = transferBar(flags.json)
      const result = await pushCommand({ id, remote, dir: flags.dir, store: flags.store, ...opts, ...(bar.onProgress ? { onProgress: bar.onProgress } : {}) }).finally(() =>
        bar.stop(),
      )
      print(flags, result, pushView)
    })
}
