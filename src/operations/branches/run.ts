import { z } from 'zod'
import { defineOperation } from '../operation.js'
import { branchName } from '../schemas.js'

const limitVia = z.enum(['cgroup', 'rlimit'])

export const run = defineOperation({
  name: 'run',
  description: 'Run a command sandboxed (a branch, or the workspace, at the workspace path; no network unless net is host); returns its exit code, output and changed paths.',
  input: {
    command: z.array(z.string()).min(1).describe('the program and its arguments'),
    branch: branchName.optional(),
    net: z.enum(['none', 'host']).optional(),
    timeout: z.string().optional().describe('e.g. 30s, 5m'),
  },
  output: z.object({
    exitCode: z.number().describe('128 + N when killed by signal N (137 on timeout)'),
    stdout: z.string().describe('the first bytes of each stream (see truncated)'),
    stderr: z.string(),
    truncated: z.boolean(),
    durationMs: z.number(),
    timedOut: z.boolean(),
    oomKilled: z.boolean(),
    limits: z.object({ memory: limitVia.optional(), pids: limitVia.optional(), cpu: z.literal('rlimit').optional() }).describe('how each requested limit was enforced'),
    warnings: z.array(z.string()).describe('limits enforced more weakly than asked, isolation weaker than documented'),
    branch: z.string().nullable().describe('null: the workspace itself'),
    changedPaths: z.array(z.string()),
  }),
  annotations: { readOnly: false, destructive: true, idempotent: false },
  cli: {
    own: 'run',
    why: 'the command line also records runs (--record with its capture and redaction flags, a second operation), writes both of the output streams as they come and takes the limit, environment and expose flags of the sandbox',
  },
  async run(where, { command, branch, net, timeout }, { signal, env }) {
    const { runWithEffects } = await import('../../effects/runWithEffects.js')
    // a client's cancel kills the command's process tree
    return runWithEffects({ ...where, cmd: command, signal, callerEnv: env, ...(branch ? { branch } : {}), ...(net ? { net } : {}), ...(timeout ? { timeout } : {}) })
  },
})
