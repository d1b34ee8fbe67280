import type { Command } from 'commander'
import { type CommonFlags, common, commonFlags } from '../context.js'
import { formatBytes } from '../format.js'
import { emit, note } from '../output.js'
import { progressBar } from '../progress.js'
import { quotePath } from '../../world/quotePath.js'

interface SnapshotOpts {
  message?: string
  agent?: string
  tag?: string
  respectGitignore?: boolean
  allowEmpty?: boolean
  allowExternalSymlinks?: boolean
  trace?: string | false
  env?: boolean
  keepEnv?: string[]
  scrubEnv?: string[]
  effects?: string
  branch?: string
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value]

export function registerSnapshot(program: Command): void {
  common(program.command('snapshot'))
    .description('snapshot the workspace; prints the snapshot id')
    .option('-m, --message <msg>', 'what this snapshot is')
    .option('--agent <id>', 'the agent that made it')
    .option('--tag <name>', 'also tag it')
    .option('--respect-gitignore', 'also apply .gitignore files (remembered by snapshot)')
    .option('--no-respect-gitignore', 'do not apply .gitignore files')
    .option('--allow-empty', 'write a new snapshot even if nothing changed')
    .option('--allow-external-symlinks', 'record symlinks that lead out of the workspace')
    .option('--trace <run>', 'the trace layer: a run id (or prefix, or latest), a FILE.run.json, or a chat transcript messages.jsonl')
    .option('--no-trace', 'do not attach the run recorded since the last snapshot')
    .option('--env', 'record the environment, secret-looking names and values scrubbed')
    .option('--keep-env <name>', 'with --env: record this variable as it is (repeatable)', collect)
    .option('--scrub-env <name>', 'with --env: scrub this variable too (repeatable)', collect)
    .option('--effects <ledger>', 'the effects layer: a ledger object by id')
    .option('--branch <name>', "snapshot a fork's branch (fork --materialize) as its child's next image, moving the child's ref, not HEAD")
    .action(async (opts: SnapshotOpts, cmd: Command) => {
      const flags = commonFlags(cmd)
      if (opts.branch !== undefined) return snapshotBranch(flags, opts as SnapshotOpts & { branch: string })
      const { snapshotAgent } = await import('../../image/snapshotAgent.js')
      const bar = progressBar('hashing', flags.json)
      const result = await snapshotAgent({ dir: flags.dir, store: flags.store, ...opts, onProgress: bar.onProgress }).finally(() => bar.stop())
      for (const path of result.skipped) process.stderr.write(`forkpoint: skipped ${quotePath(path)} (not a file, directory or symlink)\n`)
      if (!flags.json) note(`${result.created ? 'snapshot' : 'nothing changed since HEAD'}: ${result.files} files, ${formatBytes(result.bytes)}; read ${result.hashedFiles} (${formatBytes(result.hashedBytes)})`)
      emit(flags, result, (r) => r.id)
    })
}

async function snapshotBranch(flags: CommonFlags, opts: SnapshotOpts & { branch: string }): Promise<void> {
  const { UsageError } = await import('../../errors/index.js')
  const layerOptions = (['tag', 'env', 'keepEnv', 'scrubEnv', 'effects'] as const).filter((o) => opts[o] !== undefined)
  if (layerOptions.length > 0 || typeof opts.trace === 'string') throw new UsageError(`snapshot --branch takes only -m, --agent and --allow-external-symlinks (the other layers are the child's)`)
  const { snapshotForkBranch } = await import('../../image/snapshotForkBranch.js')
  const result = await snapshotForkBranch({ dir: flags.dir, store: flags.store, branch: opts.branch, message: opts.message, agent: opts.agent, allowExternalSymlinks: opts.allowExternalSymlinks })
  if (!flags.json && !result.created) note(`nothing changed since ${result.ref}`)
  emit(flags, result, (r) => r.id)
}
