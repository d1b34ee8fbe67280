import { z } from 'zod'
import { defineOperation } from '../operation.js'
import { branchInfo, branchName } from '../schemas.js'

export const branch = defineOperation({
  name: 'branch',
  description: 'Make a copy-on-write branch of the workspace: try something there, then commit it or abort it.',
  input: { name: branchName, backend: z.enum(['overlay', 'reflink', 'copy', 'auto']).optional() },
  output: branchInfo,
  annotations: { readOnly: false, destructive: false, idempotent: false },
  cli: { own: 'branch', why: 'the command line also lists branches, mounts one at a path of the caller and caps its disk' },
  async run(where, { name, backend }) {
    const { makeBranch } = await import('../../branch/lifecycle/makeBranch.js')
    return makeBranch({ ...where, name, backend: backend ?? 'auto' })
  },
})
