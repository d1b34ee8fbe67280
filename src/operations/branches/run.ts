import { z } from 'zod'
import { DEFAULT_TIMEOUT } from '../../sandbox/limits.js'
import { definedFields } from '../../util/definedFields.js'
import { defineOperation } from '../operation.js'
import type { Rendering } from '../rendering.js'
import { branchName } from '../schemas.js'

const limitVia = z.enum(['cgroup', 'rlimit'])

const runResult = z.object({
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
})

const input = {
  command: z.array(z.string()).min(1).describe('the program and its arguments (after -- on the command line)'),
  branch: branchName.optional().describe('run inside this live branch (default: the workspace itself, its store read-only)'),
  net: z.enum(['none', 'host']).optional().describe('none (the default): no network, not even the host 127.0.0.1; host: through the effects policy'),
  timeout: z.string().optional().describe(`wall-clock limit, e.g. 60s, 0 for none (default ${DEFAULT_TIMEOUT}); kills the whole process tree`),
  memory: z.string().optional().describe('memory limit, e.g. 512M'),
  pids: z.number().int().positive().optional().describe('most processes at once'),
  cpu: z.number().positive().optional().describe('CPU time limit in seconds'),
  env: z.array(z.string()).optional().describe('pass this variable of the caller in too (repeatable; by default only PATH, LANG, LANGUAGE, LC_*, TERM, TZ)'),
  // not --env-file: Node 20 takes that flag for itself wherever it stands in argv
  envFrom: z.string().optional().describe('add the NAME=VALUE lines of this file to the environment'),
  expose: z.array(z.string()).optional().describe('show this host path read-only at its own path (repeatable; e.g. a socket)'),
}

/** The command's output went to the terminal as it came; what is left to say is how it ended. */
const runRendering: Rendering<z.infer<typeof runResult>, { timeout?: string | undefined; memory?: string | undefined }> = {
  human: () => '',
  warnings: (r, { timeout, memory }) => [
    ...r.warnings.map((w) => `forkpoint: warning: ${w}`),
    ...(r.timedOut ? [`forkpoint: timed out after ${timeout ?? DEFAULT_TIMEOUT}; the process tree was killed`] : []),
    ...(r.oomKilled ? [`forkpoint: killed: memory limit ${memory} reached`] : []),
  ],
  exit: (r) => r.exitCode,
}

export const run = defineOperation({
  name: 'run',
  description: 'Run a command sandboxed (a branch, or the workspace, at the workspace path; no network unless net is host); returns its exit code, output and changed paths.',
  input,
  output: runResult,
  annotations: { readOnly: false, destructive: true, idempotent: false },
  local: {
    fields: ['env', 'envFrom', 'expose'],
    why: "the caller's variables, a file of the caller's, and paths of the caller's machine shown inside the sandbox",
  },
  cli: { usage: 'run <command...>', terminal: true, rendering: runRendering },
  async run(where, { command, env: passEnv, envFrom, ...options }, { signal, env, terminal }) {
    const { runWithEffects } = await import('../../effects/runWithEffects.js')
    return runWithEffects({
      ...where,
      cmd: command,
      signal, // a client's cancel kills the command's process tree
      callerEnv: env,
      ...definedFields({ ...options, passEnv, envFile: envFrom }),
      // on the command line the output goes to the terminal as it comes (under --json it is in the result alone)
      ...(terminal === 'stdout' ? { onOutput: (stream: 'stdout' | 'stderr', chunk: Buffer) => process[stream].write(chunk) } : {}),
    })
  },
})
