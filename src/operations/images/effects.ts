import { z } from 'zod'
import { UsageError } from '../../errors/index.js'
import { defineOperation } from '../operation.js'
import { effectsListing, ledgerEntry } from '../schemas.js'
import { renderEffects, renderRecovered } from '../text/renderEffects.js'

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
  cli: {
    usage: 'effects [id]',
    rendering: { human: (r, { pending, uncertain }) => renderEffects(r, pending ? 'pending' : uncertain ? 'uncertain' : 'all') },
  },
  async run(where, { id, pending, uncertain }, { env }) {
    if (pending && uncertain) throw new UsageError('effects: give --pending or --uncertain, not both', { field: 'pending' })
    const { listEffects } = await import('../../effects/listEffects.js')
    return listEffects({ ...where, ...(id === undefined ? {} : { id }), pending: pending ?? false, uncertain: uncertain ?? false, env })
  },
})

export const effectsRecover = defineOperation({
  name: 'effects_recover',
  description: "Send the committed effects a crash left unsent (the same Idempotency-Key, the agent's headers) and record their answers.",
  input: {},
  output: z.object({
    sent: z.array(ledgerEntry).describe('the executed entries of the requests sent now'),
    resent: z.array(ledgerEntry).describe('those of sent whose earlier attempt has no recorded answer: a service ignoring Idempotency-Key may have had them twice'),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: true },
  cli: { usage: 'effects recover', rendering: { human: renderRecovered } },
  async run(where, _args, { env }) {
    const { sendUnsent } = await import('../../effects/sendUnsent.js')
    return sendUnsent({ ...where, always: true, env })
  },
})
