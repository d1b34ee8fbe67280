import { z } from 'zod'
import { MAX_FORK_CHILDREN } from '../../image/forkImage.js'
import { defineOperation } from '../operation.js'
import { digest, snapshotId } from '../schemas.js'

const child = z.object({ index: z.number(), id: digest, ref: z.string(), branch: z.object({ name: z.string(), path: z.string() }).optional() })

export const fork = defineOperation({
  name: 'fork',
  description:
    'Make N children of an image (refs/forks/<id>/<i>), each an image of its own to snapshot on, diff and merge; with materialize, also a copy-on-write branch each holding its files (fork-<id>-<i>).',
  input: {
    id: snapshotId.optional(),
    count: z.number().int().min(1).max(MAX_FORK_CHILDREN).describe('how many children'),
    materialize: z.boolean().optional().describe("also make each child a branch holding the image's files (fork-<id>-<i>)"),
  },
  output: z.object({ children: z.array(child) }),
  annotations: { readOnly: false, destructive: false, idempotent: false },
  cli: {
    usage: 'fork <id>',
    short: { count: 'n' },
    rendering: { human: (r) => r.children.map((c) => (c.branch ? `${c.id}\t${c.branch.name}\t${c.branch.path}` : c.id)).join('\n') },
  },
  async run(where, { id, count, materialize }, { env }) {
    const { forkImage } = await import('../../image/forkImage.js')
    return { children: await forkImage({ ...where, id: id ?? 'HEAD', n: count, materialize: materialize ?? false, persistent: true, env }) }
  },
})
