import { z } from 'zod'
import { commitNextSteps } from '../../branch/commit/commitInProgress.js'
import { counted } from '../../util/plural.js'
import { defineOperation } from '../operation.js'
import { change, digest } from '../schemas.js'
import { formatChanges, short } from '../text/format.js'

const statusOutput = z.object({
  workspace: z.string(),
  headName: z.string().nullable(),
  head: digest.nullable(),
  clean: z.boolean(),
  changes: z.array(change),
  merge: z.object({ theirs: digest.nullable(), conflicts: z.array(z.string()) }).nullable(),
  commit: z.object({ branch: z.string(), conflicts: z.array(z.string()) }).nullable(),
})

export const status = defineOperation({
  name: 'status',
  description: "The workspace's changes since HEAD, HEAD's id and branch, and a merge in progress if any.",
  input: { respectGitignore: z.boolean().optional().describe('apply .gitignore files (default: as the last snapshot did)') },
  output: statusOutput,
  annotations: { readOnly: true, destructive: false, idempotent: true },
  cli: {
    usage: 'status',
    negatable: ['respectGitignore'],
    served: (args) => args.respectGitignore === undefined,
    rendering: {
      human(r) {
        const where = `${r.headName ? `on ${r.headName}` : 'HEAD detached'}${r.head ? ` at ${short(r.head)}` : ' (no snapshot yet)'}`
        const merging = `${r.merge ? `\n${mergeNote(r.merge)}` : ''}${r.commit ? `\n${commitNote(r.commit)}` : ''}`
        return r.clean ? `${where}${merging}\nclean` : `${where}${merging}\n${formatChanges(r.changes)}`
      },
    },
  },
  async run(where, { respectGitignore }, { scanner, notice, env }) {
    const { recoverUnsent } = await import('../../effects/sendUnsent.js')
    const recovered = await recoverUnsent({ ...where, env })
    if (recovered) notice?.(recovered)
    const { status } = await import('../../world/workspace/status.js')
    return status({ ...where, scanner, ...(respectGitignore === undefined ? {} : { respectGitignore }) })
  },
})

function mergeNote(merge: { theirs: string | null; conflicts: string[] }): string {
  const what = merge.theirs ? `merging ${short(merge.theirs)}` : 'merging (damaged merge state)'
  const conflicts = merge.conflicts.length > 0 ? ` with ${counted(merge.conflicts.length, 'conflict')} (${merge.conflicts.join(', ')})` : ''
  return `${what}${conflicts}: fix the files, then 'forkpoint merge --continue', or 'forkpoint merge --abort'`
}

function commitNote(commit: { branch: string; conflicts: string[] }): string {
  const n = commit.conflicts.length
  return `committing branch ${commit.branch} with ${counted(n, 'conflict')} (${commit.conflicts.join(', ')}): ${commitNextSteps(commit.branch)}`
}
