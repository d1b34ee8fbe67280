import { z } from 'zod'
import { defineOperation } from '../operation.js'
import { confineRemote } from '../requestPolicy.js'
import { counted } from '../../util/plural.js'
import { digest, snapshotId } from '../schemas.js'
import { formatBytes, short } from '../text/format.js'

export const push = defineOperation({
  name: 'push',
  description:
    'Send an image and its history to a remote (file:///dir[:tag] inside the workspace or an allowed directory, oci://host/repo[:tag] or s3://bucket/prefix[:tag] under an allowed remote of the service); only what the remote lacks travels.',
  input: {
    id: snapshotId,
    remote: z.string().min(1).describe('file:///dir[:tag], oci://host/repo[:tag] or s3://bucket/prefix[:tag]'),
    repack: z.boolean().optional().describe('send the whole image as one new pack (an image spanning more than 16 packs is repacked anyway)'),
    depth: z.number().int().min(1).optional().describe('send the snapshot with only N snapshots of history (1: no parents)'),
    sign: z.boolean().optional().describe('add an Ed25519 signature (key: PEM text or file in $FORKPOINT_SIGNING_KEY)'),
    insecure: z.boolean().optional().describe('plain HTTP to a registry that is not on loopback'),
  },
  local: { fields: ['sign', 'insecure'], why: "a signature is the caller's key's to give; plain HTTP off loopback is the caller's risk to take" },
  output: z.object({
    id: digest,
    remote: z.string(),
    tag: z.string().nullable().describe('the tag set, or null for an untagged push'),
    manifest: digest.describe('the pushed index: REMOTE@MANIFEST names exactly this image'),
    objects: z.number(),
    totalBytes: z.number(),
    sentObjects: z.number().describe('objects that travelled in the new pack (the rest the remote held)'),
    sentBytes: z.number(),
    packs: z.number().describe('packs the image spans on the remote'),
    repacked: z.boolean(),
    continued: z.boolean().describe('only what the snapshot added since an image this store pushed or pulled was walked'),
    shallow: z.array(digest).describe('snapshots whose parents were left out'),
    signed: z.boolean(),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: true },
  cli: {
    usage: 'push <id> <remote>',
    progress: 'transfer',
    rendering: {
      human: (r) =>
        [
          `pushed ${short(r.id)} to ${r.remote}${r.tag === null ? `@${r.manifest}` : `:${r.tag}`}${r.signed ? ' (signed)' : ''}`,
          `  ${r.sentObjects} of ${counted(r.objects, 'object')} sent: ${formatBytes(r.sentBytes)} with the manifests, for an image of ${formatBytes(r.totalBytes)} in ${counted(r.packs, 'pack')}${r.repacked ? ' (repacked)' : ''}${r.shallow.length > 0 ? ', shallow' : ''}`,
          `  manifest ${r.manifest}`,
        ].join('\n'),
    },
  },
  async run(where, { id, remote, repack, depth, sign, insecure }, { signal, onProgress, policy, env }) {
    if (policy) await confineRemote(policy, remote)
    const { pushImage } = await import('../../registry/transfer/pushImage.js')
    const { signingKeyFromEnv } = await import('../../registry/signing/signingKeys.js')
    return pushImage({
      ...where,
      id,
      remote,
      signal,
      insecure: insecure ?? false,
      ...(sign ? { signingKey: signingKeyFromEnv(env) } : {}),
      ...(repack ? { repack: true } : {}),
      ...(depth === undefined ? {} : { depth }),
      ...(onProgress ? { onProgress } : {}),
    })
  },
})
