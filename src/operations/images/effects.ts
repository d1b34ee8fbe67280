import { z } from 'zod'
import { UsageError } from '../../errors/index.js'
import { defineOperation } from '../operation.js'
import { effectsListing } from '../schemas.js'

export const effects = defineOperation({
  name: 'effects',
  description: 'List the effects ledger (verified) of an image, a live branch or, by default, the workspace: every recorded call of a tool and what became of it.',
  input: {
    id: z.string().min(1).optional().describe("a live branch's name, an image (snapshot id, ref, short id) or a ledger id; default the workspace"),
    pending: z.boolean().optional().describe('only the deferred effects waiting to be sent (the outbox)'),
    uncertain: z.boolean().optional().describe('only effects resent after an attempt whose outcome was unknown (a service ignoring Idempotency-Key may have had them twice)'),
  },
  output: effectsListing,
  annotations: { readOnly: true, destructive: false, idempotent: true },
  cli: { own: 'effects', why: "its `recover` subcommand sends what a crash left unsent: a command with a subcommand, which the table's form does not make" },
  async run(where, { id, pending, uncertain }, { env }) {
    if (pending && uncertain) throw new UsageError('effects: give pending or uncertain, not both', { field: 'pending' })
    const { listEffects } = await import('../../effects/listEffects.js')
    return listEffects({ ...where, ...(id === undefined ? {} : { id }), pending: pending ?? false, uncertain: uncertain ?? false, env })
  },
})
