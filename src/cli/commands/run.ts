import type { Command } from 'commander'
import { UsageError } from '../../errors/index.js'
import { DEFAULT_TIMEOUT } from '../../sandbox/limits.js'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'
import { type RedactionFlags, redactionOptions, redactionRules } from '../redactionFlags.js'

interface RunFlags extends RedactionFlags {
  record?: boolean
  proxy?: boolean
  deterministic?: boolean
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

/**
 * One command, two jobs: `--record` records an agent run (trace layer); otherwise the
 * command runs sandboxed (own mount, PID and network namespaces; the branch at the
 * workspace path) and forkpoint exits with its code.
 */
export function registerRun(program: Command): void {
  redactionOptions(common(program.command('run')))
    .description('run CMD sandboxed (the branch at the workspace path, no network by default), or with --record, record it as a run')
    .argument('<command...>', 'the command and its arguments, after --')
    .option('--record', 'record the run (in-process for Node agents; add --proxy for any language)')
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
      if (opts.record) {
        const used = [...SANDBOX_FLAGS.filter((f) => opts[f] !== undefined), ...(opts.env.length > 0 ? ['env'] : []), ...(opts.expose.length > 0 ? ['expose'] : [])]
        if (used.length > 0) throw new UsageError(`--record cannot be combined with sandbox options yet (${used.map((f) => `--${f}`).join(', ')})`)
        const { recordWithEffects } = await import('../../effects/runWithEffects.js')
        const result = await recordWithEffects({
          command,
          cwd: flags.dir,
          storeDir: flags.store,
          redact: opts.redact,
          rules: redactionRules(opts),
          proxy: Boolean(opts.proxy),
          deterministic: Boolean(opts.deterministic),
          ...(opts.entrypoint ? { entrypoint: opts.entrypoint } : {}),
          ...(opts.out ? { out: opts.out } : {}),
          stdout: flags.json ? 'stderr' : 'inherit',
        })
        const { run: _run, agentStdout: _out, ...summary } = result
        emit(flags, summary, (r) => `recorded ${r.runId}: ${r.steps} steps, agent exited ${r.exitCode}${r.artifact ? `, artifact ${r.artifact}` : ''}`)
        return
      }
      const { runWithEffects } = await import('../../effects/runWithEffects.js')
      const result = await runWithEffects({
        dir: flags.dir,
        store: flags.store,
        cmd: command,
        branch: opts.branch,
        net: opts.net as 'none',
        memory: opts.memory,
        pids: opts.pids === undefined ? undefined : Number(opts.pids),
        cpu: opts.cpu === undefined ? undefined : Number(opts.cpu),
        timeout: opts.timeout,
        passEnv: opts.env,
        envFile: opts.envFrom,
        expose: opts.expose,
        // streamed as written; under --json the output is in the result instead
        ...(flags.json ? {} : { onOutput: (stream: 'stdout' | 'stderr', chunk: Buffer) => process[stream].write(chunk) }),
      })
      for (const warning of result.warnings) process.stderr.write(`forkpoint: warning: ${warning}\n`)
      if (result.timedOut) process.stderr.write(`forkpoint: timed out after ${opts.timeout ?? DEFAULT_TIMEOUT}; the process tree was killed\n`)
      emit(flags, result, () => '')
      process.exitCode = result.exitCode
    })
}
