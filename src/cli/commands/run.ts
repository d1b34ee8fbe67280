import type { Command } from 'commander'
import { UsageError } from '../../errors/index.js'
import { common, commonFlags } from '../context.js'
import { emit } from '../output.js'
import { type RedactionFlags, redactionOptions, redactionRules } from '../redactionFlags.js'

interface RunFlags extends RedactionFlags {
  record?: boolean
  proxy?: boolean
  deterministic?: boolean
  entrypoint?: string
  out?: string
}

export function registerRun(program: Command): void {
  redactionOptions(common(program.command('run')))
    .description('run an agent command; with --record, record every LLM / HTTP / SDK step as a run')
    .argument('<command...>', 'the agent command, after --')
    .option('--record', 'record the run (in-process for Node agents; add --proxy for any language)')
    .option('--proxy', 'record through a local proxy on 127.0.0.1 (sets OPENAI_BASE_URL, ANTHROPIC_BASE_URL)')
    .option('--deterministic', 'pin Date and Math.random in the agent (replay pins them the same way)')
    .option('--entrypoint <name>', 'name the run (default: the script)')
    .option('-o, --out <file>', 'also write the run artifact (*.run.json)')
    .action(async (command: string[], opts: RunFlags, cmd: Command) => {
      const flags = commonFlags(cmd)
      if (!opts.record) throw new UsageError('forkpoint run needs --record (or a sandbox option such as --branch)')
      const { recordCommand } = await import('../../index.js')
      const result = await recordCommand({
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
    })
}
