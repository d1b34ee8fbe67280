import { z } from 'zod'
import { counted } from '../../util/plural.js'
import { defineOperation } from '../operation.js'
import { branchCommit, branchName, keepLeftovers } from '../schemas.js'
import { heldBackLines } from '../text/heldBackLines.js'

const commitRendering = {
  human: (r: z.infer<typeof branchCommit>) =>
    `committed ${r.name}: ${r.written.length} written, ${r.deleted.length} deleted (${r.durationMs.toFixed(0)} ms)${sentLine(r.effects)}${heldBackLines(r.heldBack, 'commit with --trust-git', "a branch's sandboxed work")}`,
}

const trustGit = z.boolean().optional().describe('apply the .git/config, hooks and .git files the branch wrote (held back otherwise)')
const trustGitIsLocal = { fields: ['trustGit' as const], why: "what it applies runs code on the caller's next git command, outside any sandbox" }

export const commit = defineOperation({
  name: 'commit',
  description:
    "Apply a branch to its parent and end it (three-way), then send the branch's deferred effects. A conflict is an error; into the workspace it leaves the commit in progress, the conflicts marked in the files: fix them, then commit_continue, or commit_abort.",
  input: { name: branchName, failIfStale: z.boolean().optional().describe('first committer wins: refuse if a sibling committed first'), trustGit },
  local: trustGitIsLocal,
  output: branchCommit,
  annotations: { readOnly: false, destructive: false, idempotent: false },
  cli: { usage: 'commit <name>', rendering: commitRendering },
  async run(where, { name, failIfStale, trustGit }, { onStep, env }) {
    const { commitNamedWithEffects } = await import('../../effects/branchEffects.js')
    return commitNamedWithEffects({
      ...where,
      name,
      onConflict: failIfStale ? 'fail' : 'merge',
      stopOnConflict: true,
      env,
      ...(trustGit ? { trustGit } : {}),
      ...(onStep ? { onStep } : {}),
    })
  },
})

export const commitContinue = defineOperation({
  name: 'commit_continue',
  description: 'Finish a branch commit stopped on conflicts, once the files are fixed (refused while markers or, unless keepLeftovers, NAME~LABEL files remain).',
  input: { name: branchName, keepLeftovers, trustGit },
  local: trustGitIsLocal,
  output: branchCommit,
  annotations: { readOnly: false, destructive: false, idempotent: false },
  cli: { usage: 'commit <name>', selectedBy: 'continue', rendering: commitRendering },
  async run(where, { name, keepLeftovers, trustGit }, { onStep, env }) {
    const { commitNamedWithEffects } = await import('../../effects/branchEffects.js')
    return commitNamedWithEffects({
      ...where,
      name,
      stopOnConflict: true,
      resume: true,
      keepLeftovers: keepLeftovers ?? false,
      env,
      ...(trustGit ? { trustGit } : {}),
      ...(onStep ? { onStep } : {}),
    })
  },
})

export const commitAbort = defineOperation({
  name: 'commit_abort',
  description: "Undo a branch commit stopped on conflicts: the workspace's files as they were; the branch stays live.",
  input: { name: branchName },
  output: z.object({ name: z.string(), restored: z.array(z.string()) }),
  annotations: { readOnly: false, destructive: true, idempotent: false },
  cli: {
    usage: 'commit <name>',
    selectedBy: 'abort',
    rendering: { human: (r) => `commit of ${r.name} aborted: ${counted(r.restored.length, 'file')} restored; the branch is still live` },
  },
  async run(where, { name }) {
    const { abortCommit } = await import('../../branch/commit/abortCommit.js')
    return abortCommit({ ...where, name })
  },
})

/** What went out: the requests this commit sent (a sibling may have sent the same key already: then none). */
function sentLine({ sent, resent, executed, handedUp }: { sent: unknown[]; resent: unknown[]; executed: unknown[]; handedUp: unknown[] }): string {
  if (handedUp.length > 0) return `; ${counted(handedUp.length, 'deferred effect')} passed to the parent branch`
  const resends = resent.length > 0 ? ` (${resent.length} resent after an interrupted commit)` : ''
  if (sent.length > 0) return `; ${counted(sent.length, 'deferred effect')} sent${resends}`
  return executed.length > 0 ? `; ${counted(executed.length, 'deferred effect')} already sent, not sent again` : ''
}
