import { z } from 'zod'
import { counted } from '../../util/plural.js'
import { agentStdoutFor, defineOperation } from '../operation.js'
import { fileRule } from '../requestPolicy.js'
import { digest, redactionRuleFields, runDiff } from '../schemas.js'

export const replay = defineOperation({
  name: 'replay',
  description:
    'Re-execute a recorded run offline, every response served from the recording (exit 3 on divergence, 4 on network access); an error names the first step that differs.',
  input: {
    run: z.string().min(1).describe('a run id, unique prefix, latest, or a *.run.json file'),
    command: z.array(z.string()).optional().describe('the agent command after -- (default: the recorded one)'),
    trustCommand: z.boolean().optional().describe('run the recorded command of a run from a file or another store (it runs whatever the run names)'),
    liveFrom: z.number().optional().describe('serve steps before this one from the recording, run the rest live and record a new run'),
    ...redactionRuleFields,
  },
  local: {
    fields: ['command', 'trustCommand', 'liveFrom', 'redactKey', 'redactPath', 'redactPattern'],
    why: "a command of the caller's, a recorded command from elsewhere, calls to the network, and regular expressions run on every call: the caller's machine's to allow",
  },
  output: z.object({
    runId: z.string(),
    diff: runDiff.describe('what the replay produced, compared with the recording'),
    exitCode: z.number(),
    isolation: z.enum(['none', 'netns', 'guard']),
    steps: z.number(),
    served: z.number().describe('steps served from the recording'),
    forked: z.object({ runId: z.string(), digest: digest.nullable() }).nullable(),
    stdout: z.string().optional().describe("the agent's stdout, unless it went to the caller's terminal"),
  }),
  annotations: { readOnly: true, destructive: false, idempotent: true },
  cli: {
    usage: 'replay <run> [command...]',
    terminal: true,
    rendering: {
      human: (r, { liveFrom }) =>
        r.forked
          ? `forked ${r.forked.runId} from ${r.runId} at step ${liveFrom}: ${counted(r.served, 'step')} served, ${r.steps - r.served} live`
          : `replayed ${r.runId} offline (${r.isolation}): ${r.served}/${r.steps} steps served, identical to the recording`,
    },
  },
  async run(where, { run: spec, command, trustCommand, liveFrom, ...rules }, { policy, env, terminal }) {
    const { loadRun } = await import('../../trace/core/loadRun.js')
    const { replayRun } = await import('../../trace/replay/replayRun.js')
    const { redactionRules } = await import('../../trace/redact/userRules.js')
    const checked = redactionRules(rules)
    const run = await loadRun({ ...where, spec, confine: fileRule(policy) })
    const stdout = agentStdoutFor(terminal)
    const {
      replayed: _replayed,
      agentStdout,
      ...summary
    } = await replayRun({
      ...where,
      run,
      command,
      trustCommand: trustCommand ?? false,
      liveFrom,
      rules: checked,
      stdout,
      env,
    })
    return stdout === 'capture' ? { ...summary, stdout: agentStdout } : summary
  },
})
