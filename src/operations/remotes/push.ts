import { z } from 'zod'
import { defineOperation } from '../operation.js'
import { confineRemote } from '../requestPolicy.js'
import { digest, snapshotId } from '../schemas.js'

export const push = defineOperation({
  name: 'push',
  description:
    'Send an image and its history to a remote (file:///dir[:tag] inside the workspace or an allowed directory, oci://host/repo[:tag] or s3://bucket/prefix[:tag] under an allowed remote of the service); only what the remote lacks travels.',
  input: { id: snapshotId, remote: z.string().min(1).describe('file:///dir[:tag], oci://host/repo[:tag] or s3://bucket/prefix[:tag]') },
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
  cli: { own: 'push', why: 'the command line also signs with the key in its environment, sends shallow history and repacks' },
  async run(where, { id, remote }, { signal, onProgress, policy }) {
    if (policy) await confineRemote(policy, remote)
    const { pushImage } = await import('../../registry/transfer/pushImage.js')
    return pushImage({ ...where, id, remote, signal, ...(onProgress ? { onProgress } : {}) })
  },
})
