import { z } from 'zod'
import { REDACTION_MODES, RUN_STATUSES } from '../../objects/Run.js'
import { counted } from '../../util/plural.js'
import { definedFields } from '../../util/definedFields.js'
import { agentStdoutFor, defineOperation } from '../operation.js'
import { digest, redactionRuleFields } from '../schemas.js'

export const record = defineOperation({
  name: 'record',
  description:
    'Run an agent command and record it as a run: every LLM and HTTP call (in-process for Node agents; through the egress proxy or a local proxy for any language), redacted before it reaches disk.',
  input: {
    command: z.array(z.string()).min(1).describe('the agent command and its arguments (after -- on the command line)'),
    egress: z.boolean().optional().describe("record every connection through the egress proxy: a network of the agent's own, HTTPS read with the store's CA"),
    proxy: z.boolean().optional().describe('record through a local proxy on 127.0.0.1 (sets OPENAI_BASE_URL, ANTHROPIC_BASE_URL)'),
    deterministic: z.boolean().optional().describe('pin Date and Math.random in the agent (replay pins them the same way)'),
    entrypoint: z.string().min(1).optional().describe('name the run (default: the script)'),
    out: z.string().min(1).optional().describe('also write the run artifact (*.run.json)'),
    redact: z
      .enum(REDACTION_MODES)
      .optional()
      .describe('secrets (default): drop secrets only; content: also hash prompts and responses (diffable, not replayable); encrypt: AES-256-GCM with FORKPOINT_KEY'),
    ...redactionRuleFields,
  },
  output: z.object({
    runId: z.string(),
    digest: digest.nullable().describe('the run object, null when nothing was stored'),
    status: z.enum(RUN_STATUSES),
    exitCode: z.number().describe("the agent's exit code"),
    steps: z.number(),
    artifact: z.string().nullable().describe('the run artifact written (out), or null'),
    warnings: z.array(z.string()).describe('what the egress proxy refused (connections neither HTTP nor TLS), in words'),
  }),
  annotations: { readOnly: false, destructive: false, idempotent: false },
  surfaces: {
    only: ['cli'],
    why: "it runs the caller's command outside a sandbox, its calls captured in its own process or through a proxy on the caller's machine: a remote caller runs commands sandboxed (run)",
  },
  cli: {
    usage: 'run <command...>',
    selectedBy: 'record',
    short: { out: 'o' },
    terminal: true,
    rendering: {
      human: (r) => `recorded ${r.runId}: ${counted(r.steps, 'step')}, agent exited ${r.exitCode}${r.artifact ? `, artifact ${r.artifact}` : ''}`,
      warnings: (r) => r.warnings.map((w) => `forkpoint: warning: ${w}`),
    },
  },
  async run(where, { command, entrypoint, out, ...flags }, { env, terminal }) {
    const { recordWithEffects } = await import('../../effects/runWithEffects.js')
    const { recordingOptions } = await import('../../trace/record/recordingOptions.js')
    const stdout = agentStdoutFor(terminal)
    const {
      run: _run,
      agentStdout: _stdout,
      ...summary
    } = await recordWithEffects({ ...where, command, ...recordingOptions(flags), ...definedFields({ entrypoint, out }), stdout, env })
    return summary
  },
})
