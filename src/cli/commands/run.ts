import type { Command } from 'commander'
import type { RunResult } from '../../branch/run/runInBranch.js'
import { UsageError } from '../../errors/index.js'
import { DEFAULT_TIMEOUT } from '../../sandbox/limits.js'
import type { NetMode } from '../../sandbox/runSandboxed.js'
import type { RecordResult } from '../../trace/record/recordCommand.js'
import type { AgentStdout } from '../../trace/record/spawnAgent.js'
import { type Where, common, commonFlags } from '../context.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'
import { type RecordingFlags, recordingOptions, redactionOptions } from '../redactionFlags.js'
import { counted } from '../../util/plural.js'

interface RunFlags extends RecordingFlags {
  record?: boolean
  entrypoint?: string
  out?: string
  branch?: string
  net: string
  memory?: string
  pids?: string
  cpu?: string
  timeout?: string
  env: string[]
  envFrom?: string
  expose: string[]
}

const SANDBOX_FLAGS = ['branch', 'memory', 'pids', 'cpu', 'timeout', 'envFrom'] as const

const collect = (value: string, previous: string[]): string[] => [...previous, value]

export interface SandboxRunOptions extends Where {
  command: string[]
  branch?: string
  net?: NetMode
  memory?: string
  pids?: number
  cpu?: number
  timeout?: string
  /** names of our variables passed in besides the allowlist */
  env?: string[]
  /** a file of NAME=VALUE lines added to the environment */
  envFrom?: string
  expose?: string[]
  /** each chunk of the command's output as it is written */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void
}

/** `forkpoint run CMD`: the command run sandboxed (the branch at the workspace path, no network by default), under the workspace's HTTP effects policy. */
export async function runSandboxedCommand({ dir, store, command, env, envFrom, ...options }: SandboxRunOptions): Promise<RunResult> {
  const { runWithEffects } = await import('../../effects/runWithEffects.js')
  return runWithEffects({ dir, store, cmd: command, passEnv: env, envFile: envFrom, callerEnv: process.env, ...options })
}

export function sandboxRunView({ timeout, memory }: { timeout?: string | undefined; memory?: string | undefined }): Rendering<RunResult> {
  return {
    // the output was streamed as written; under --json it is in the result
    human: () => '',
    warnings: (r) => [
      ...r.warnings.map((w) => `forkpoint: warning: ${w}`),
      ...(r.timedOut ? [`forkpoint: timed out after ${timeout ?? DEFAULT_TIMEOUT}; the process tree was killed`] : []),
      ...(r.oomKilled ? [`forkpoint: killed: memory limit ${memory} reached`] : []),
    ],
    exit: (r) => r.exitCode,
  }
}

/** What a recording did, without the run itself and the agent's output. */
export type RecordSummary = Omit<RecordResult, 'run' | 'agentStdout'>

export interface RecordRunOptions extends Where, RecordingFlags {
  command: string[]
  entrypoint?: string
  out?: string
  /** where the agent's stdout goes (default: inherited) */
  stdout?: AgentStdout
}

/** `forkpoint run --record CMD`: the agent run and recorded as a run, under the workspace's HTTP effects policy. */
export async function recordRunCommand({ dir, store, command, entrypoint, out, stdout = 'inherit', ...flags }: RecordRunOptions): Promise<RecordSummary> {
  const { recordWithEffects } = await import('../../effects/runWithEffects.js')
  const result = await recordWithEffects({
    command,
    dir,
    store,
    ...recordingOptions(flags),
    ...(entrypoint ? { entrypoint } : {}),
    ...(out ? { out } : {}),
    stdout,
    env: process.env,
  })
  const { run: _run, agentStdout: _out, ...summary } = result
  return summary
}

export const recordRunView: Rendering<RecordSummary> = {
  human: (r) => `recorded ${r.runId}: ${counted(r.steps, 'step')}, agent exited ${r.exitCode}${r.artifact ? `, artifact ${r.artifact}` : ''}`,
  warnings: (r) => r.warnings.map((w) => `forkpoint: warning: ${w}`),
}

/**
 * One command, two jobs: `--record` records an agent run (trace layer); otherwise the
 * command runs sandboxed (own mount, PID and network namespaces; the branch at the
 * workspace path) and forkpoint exits with its code.
 */
export function registerRun(program: Command): void {
  redactionOptions(common(program.command('run')))
    .description('run CMD sandboxed (the branch at the workspace path, no network by default), or with --record, record it as a run')
    .argument('<command...>', 'the command and its arguments, after --')
    .option('--record', 'record the run (in-process for Node agents; add --egress or --proxy for any language)')
    .option('--egress', "record every connection through the egress proxy: a network of the agent's own, HTTPS read with the store's CA")
    .option('--proxy', 'record through a local proxy on 127.0.0.1 (sets OPENAI_BASE_URL, ANTHROPIC_BASE_URL)')
    .option('--deterministic', 'pin Date and Math.random in the agent (replay pins them the same way)')
    .option('--entrypoint <name>', 'name the run (default: the script)')
    .option('-o, --out <file>', 'also write the run artifact (*.run.json)')
    .option('--branch <NAME>', 'sandbox: run inside this live branch (default: the workspace itself, its store read-only)')
    .option('--net <MODE>', 'sandbox: none (no network, not even the host 127.0.0.1) or host', 'none')
    .option('--memory <SIZE>', 'sandbox: memory limit, e.g. 512M')
    .option('--pids <N>', 'sandbox: most processes at once')
    .option('--cpu <SECONDS>', 'sandbox: CPU time limit in seconds')
    .option('--timeout <DURATION>', `sandbox: wall-clock limit, e.g. 60s, 0 for none (default ${DEFAULT_TIMEOUT}); kills the whole process tree`)
    .option('--env <NAME>', 'sandbox: pass this variable of ours in too (repeatable; by default only PATH, LANG, LANGUAGE, LC_*, TERM, TZ)', collect, [])
    // not --env-file: Node 20 takes that flag for itself wherever it stands in argv
    .option('--env-from <FILE>', 'sandbox: add the NAME=VALUE lines of FILE to the environment')
    .option('--expose <PATH>', 'sandbox: show this host path read-only at its own path (repeatable; e.g. a socket)', collect, [])
    .action(async (command: string[], opts: RunFlags, cmd: Command) => {
      const flags = commonFlags(cmd)
      const where = { dir: flags.dir, store: flags.store }
      if (!opts.record && (opts.egress || opts.proxy)) throw new UsageError(`--${opts.egress ? 'egress' : 'proxy'} says how to record: it goes with --record`)
      if (opts.record) {
        const used = [...SANDBOX_FLAGS.filter((f) => opts[f] !== undefined), ...(opts.env.length > 0 ? ['env'] : []), ...(opts.expose.length > 0 ? ['expose'] : [])]
        if (used.length > 0) throw new UsageError(`--record cannot be combined with sandbox options yet (${used.map((f) => `--${f}`).join(', ')})`)
        const { redact, redactKey, redactPath, redactPattern, proxy, egress, deterministic, entrypoint, out } = opts
        const summary = await recordRunCommand({
          ...where,
          command,
          redact,
          redactKey,
          redactPath,
          redactPattern,
          proxy,
          egress,
          deterministic,
          entrypoint,
          out,
          stdout: flags.json ? 'stderr' : 'inherit',
        })
        print(flags, summary, recordRunView)
        return
      }
      const result = await runSandboxedCommand({
        ...where,
        command,
        branch: opts.branch,
        net: opts.net as NetMode,
        memory: opts.memory,
        pids: opts.pids === undefined ? undefined : Number(opts.pids),
        cpu: opts.cpu === undefined ? undefined : Number(opts.cpu),
        timeout: opts.timeout,
        env: opts.env,
        envFrom: opts.envFrom,
        expose: opts.expose,
        // streamed as written; under --json the output is in the result instead
        ...(flags.json ? {} : { onOutput: (stream: 'stdout' | 'stderr', chunk: Buffer) => process[stream].write(chunk) }),
      })
      print(flags, result, sandboxRunView(opts))
    })
}
