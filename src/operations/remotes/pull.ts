import { z } from 'zod'
import { defineOperation } from '../operation.js'
import { confineRemote } from '../requestPolicy.js'
import { digest } from '../schemas.js'

export const pull = defineOperation({
  name: 'pull',
  description: 'Fetch an image from a remote into the store (tagged as the remote tag); the remotes push may use.',
  input: { remote: z.string().min(1), tag: z.string().min(1).optional().describe('local tag for the image (default: the remote tag)') },
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
  cli: { own: 'pull', why: "the command line also verifies a signature with a key file of the caller's" },
  async run(where, { remote, tag }, { signal, onProgress, policy }) {
    if (policy) await confineRemote(policy, remote)
    const { pullImage } = await import('../../registry/transfer/pullImage.js')
    return pullImage({ ...where, remote, signal, ...(tag ? { tag } : {}), ...(onProgress ? { onProgress } : {}) })
  },
})
