import { z } from 'zod'
import { counted } from '../../util/plural.js'
import { defineOperation } from '../operation.js'
import { digest } from '../schemas.js'
import { formatBytes } from '../text/format.js'

export const gc = defineOperation({
  name: 'gc',
  description: 'Expire old reflog entries, then remove objects no ref or remaining reflog entry reaches.',
  input: {
    dryRun: z.boolean().optional().describe('only report what would be removed'),
    prune: z.string().min(1).optional().describe('expire reflog entries older than this first: now, never, 2.weeks.ago, a date (default 90.days)'),
  },
  output: z.object({
    kept: z.number().describe('objects reachable'),
    expiredReflogEntries: z.number().describe('reflog entries that expired (or would, in a dry run)'),
    removed: z.number().describe('objects removed (or that would be)'),
    removedIds: z.array(digest),
    freedBytes: z.number(),
  }),
  annotations: { readOnly: false, destructive: true, idempotent: true },
  cli: {
    usage: 'gc',
    short: { dryRun: 'n' },
    rendering: {
      human: (r, { dryRun }) =>
        `${dryRun ? 'would remove' : 'removed'} ${counted(r.removed, 'object')} (${formatBytes(r.freedBytes)}) and ${counted(r.expiredReflogEntries, 'reflog entry', 'reflog entries')}; ${r.kept} reachable`,
    },
  },
  async run(where, { dryRun, prune }) {
    const { gc } = await import('../../store/gc.js')
    const result = await gc({ ...where, dryRun: dryRun ?? false, ...(prune ? { prune } : {}) })
    return { ...result, removed: result.removed.length, removedIds: result.removed }
  },
})
