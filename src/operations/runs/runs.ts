import { z } from 'zod'
import { defineOperation } from '../operation.js'
import { runSummary } from '../schemas.js'

export const runs = defineOperation({
  name: 'runs',
  description: 'The recorded runs, newest first.',
  input: { limit: z.number().int().min(1).optional().describe('at most this many (default 20)') },
  output: z.object({ runs: z.array(runSummary) }),
  annotations: { readOnly: true, destructive: false, idempotent: true },
  cli: { own: 'runs', why: 'the command line also filters runs, shows, removes and exports one' },
  async run(where, { limit }) {
    const { listRuns } = await import('../../trace/core/listRuns.js')
    return { runs: await listRuns({ ...where, limit: limit ?? 20 }) }
  },
})
