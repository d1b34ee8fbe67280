import { z } from 'zod'
import { SNAPSHOT_LAYERS } from '../../objects/Snapshot.js'
import { defineOperation } from '../operation.js'
import { digest, scanCounts } from '../schemas.js'

const snapshotResult = z.object({
  id: digest.describe('the new image, or HEAD when nothing changed'),
  tree: digest,
  parents: z.array(digest),
  created: z.boolean().describe('false when nothing changed since HEAD: no object was written and id is HEAD'),
  ...scanCounts,
  attached: z.partialRecord(z.enum(SNAPSHOT_LAYERS), digest).describe('the layers this snapshot was given (the others carried from its parent)'),
})

export const snapshot = defineOperation({
  name: 'snapshot',
  description: 'Snapshot the workspace (files, and the run recorded since the last snapshot) as a new image; HEAD moves to it.',
  input: { message: z.string().optional().describe('what this snapshot is') },
  output: snapshotResult,
  annotations: { readOnly: false, destructive: false, idempotent: false },
  cli: {
    own: 'snapshot',
    why: "it adds the layers only the caller holds (an environment, a model directory, a transcript file, a fork's branch), and `--trace RUN` beside `--no-trace` is a flag whose value may be false, which the table's form does not make",
  },
  async run(where, { message }, { scanner, onProgress }) {
    const { snapshotAgent } = await import('../../image/snapshotAgent.js')
    const progress = onProgress && ((done: number, total: number) => onProgress({ done, total }))
    return snapshotAgent({ ...where, ...(message === undefined ? {} : { message }), ...(scanner ? { scanner } : {}), ...(progress ? { onProgress: progress } : {}) })
  },
})
