import { z } from 'zod'
import { defineOperation } from '../operation.js'
import { confineRemote } from '../requestPolicy.js'
import { counted } from '../../util/plural.js'
import { digest } from '../schemas.js'
import { formatBytes, short } from '../text/format.js'

export const pull = defineOperation({
  name: 'pull',
  description: 'Fetch an image from a remote into the store (tagged as the remote tag); the remotes push may use.',
  input: {
    remote: z.string().min(1).describe('REMOTE[:TAG] or REMOTE@DIGEST'),
    tag: z.string().min(1).optional().describe('local tag for the image (default: the remote tag)'),
    verifyKey: z.string().min(1).optional().describe('refuse the image unless signed by this Ed25519 public key (PEM file or text)'),
    insecure: z.boolean().optional().describe('plain HTTP to a registry that is not on loopback'),
    allowExternalSymlinks: z.boolean().optional().describe('accept symlinks that point outside the tree'),
  },
  local: {
    fields: ['verifyKey', 'insecure', 'allowExternalSymlinks'],
    why: "a key file of the caller's; plain HTTP off loopback and links out of the tree are the caller's risks to take",
  },
  output: z.object({
    id: digest,
    remote: z.string(),
    manifest: digest,
    tag: z.string().describe('the local tag now pointing at the image'),
    objects: z.number(),
    totalBytes: z.number(),
    fetchedObjects: z.number().describe('objects that travelled (the rest the store had)'),
    fetchedBytes: z.number(),
    shallow: z.array(digest).describe('snapshots whose parents the image leaves out'),
    verified: z.boolean(),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: true },
  cli: {
    usage: 'pull <remote>',
    progress: 'transfer',
    rendering: {
      human: (r) =>
        [
          `pulled ${short(r.id)} from ${r.remote} as tag ${r.tag}${r.verified ? ' (signature verified)' : ''}`,
          `  ${r.fetchedObjects} of ${counted(r.objects, 'object')} fetched, ${formatBytes(r.fetchedBytes)} of ${formatBytes(r.totalBytes)}`,
        ].join('\n'),
    },
  },
  async run(where, { remote, tag, ...local }, { signal, onProgress, policy }) {
    if (policy) await confineRemote(policy, remote)
    const { pullImage } = await import('../../registry/transfer/pullImage.js')
    return pullImage({ ...where, ...local, remote, signal, ...(tag ? { tag } : {}), ...(onProgress ? { onProgress } : {}) })
  },
})
