import { z } from 'zod'
import { counted } from '../../util/plural.js'
import { defineOperation } from '../operation.js'
import { branchName, ledgerEntry } from '../schemas.js'

export const abort = defineOperation({
  name: 'abort',
  description: 'End a branch (and its children) without applying it, leaving nothing behind; its deferred effects are dropped.',
  input: { name: branchName },
  output: z.object({ aborted: z.string(), dropped: z.array(ledgerEntry), discarded: z.array(z.string()) }),
  annotations: { readOnly: false, destructive: true, idempotent: false },
  cli: {
    usage: 'abort <name>',
    rendering: {
      human: (r) =>
        [`aborted ${r.aborted}${r.dropped.length > 0 ? `; ${counted(r.dropped.length, 'deferred effect')} dropped` : ''}`, ...r.discarded.map((d) => `warning: ${d}`)].join('\n'),
    },
  },
  async run(where, { name }, { env }) {
    const { abortNamedWithEffects } = await import('../../effects/branchEffects.js')
    return abortNamedWithEffects({ ...where, name, env })
  },
})
