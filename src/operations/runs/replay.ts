import { z } from 'zod'
import { defineOperation } from '../operation.js'
import { fileRule } from '../requestPolicy.js'
import { digest, runDiff } from '../schemas.js'

export const replay = defineOperation({
  name: 'replay',
  description: 'Re-execute a recorded run offline, every response served from the recording; an error names the first step that differs.',
  input: { run: z.string().min(1).describe('a run id, unique prefix, or latest') },
  output: z.object({
    runId: z.string(),
    diff: runDiff.describe('what the replay produced, compared with the recording'),
    exitCode: z.number(),
    isolation: z.enum(['none', 'netns', 'guard']),
    steps: z.number(),
    served: z.number().describe('steps served from the recording'),
    forked: z.object({ runId: z.string(), digest: digest.nullable() }).nullable(),
    stdout: z.string().describe("the agent's stdout"),
  }),
  annotations: { readOnly: true, destructive: false, idempotent: true },
  cli: { own: 'replay', why: "the command line runs the agent's command with the caller's terminal, resumes live from a step and redacts as told" },
  async run(where, { run: spec }, { policy, env }) {
    const { loadRun } = await import('../../trace/core/loadRun.js')
    const { replayRun } = await import('../../trace/replay/replayRun.js')
    const run = await loadRun({ ...where, spec, confine: fileRule(policy) })
    const { replayed: _replayed, agentStdout, ...summary } = await replayRun({ ...where, run, trustCommand: false, stdout: 'capture', env })
    return { ...summary, stdout: agentStdout }
  },
})
