import type { Command } from 'commander'
import { UsageError } from '../../errors/index.js'
import type { SnapshotAgentResult } from '../../image/snapshotAgent.js'
import type { SnapshotForkBranchResult } from '../../image/snapshotForkBranch.js'
import { quotePath } from '../../world/diff/quotePath.js'
import { collect } from '../allowFlags.js'
import { type Where, common, commonFlags } from '../context.js'
import { formatBytes } from '../../operations/text/format.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'
import { progressBar } from '../progress.js'
import { counted } from '../../util/plural.js'

export interface SnapshotOptions extends Where {
  message?: string
  agent?: string
  tag?: string
  respectGitignore?: boolean
  allowEmpty?: boolean
  allowExternalSymlinks?: boolean
  /** a run id (or prefix, or latest), a FILE.run.json, a messages.jsonl; false: no trace layer */
  trace?: string | false
  /** record the environment, secret-looking names and values scrubbed */
  env?: boolean
  keepEnv?: string[]
  scrubEnv?: string[]
  effects?: string
  /** the model layer: a directory of adapter or model files */
  model?: string
  /** files hashed so far, of how many */
  onProgress?: (done: number, total: number) => void
}

/** `forkpoint snapshot`: the workspace (and the layers asked for) as a snapshot. */
export async function snapshotCommand(options: SnapshotOptions): Promise<SnapshotAgentResult> {
  // a plain snapshot goes to the store's running service, which knows from its watcher what changed
  const { dir, store, onProgress: _progress, message, ...layers } = options
  if (Object.values(layers).every((v) => v === undefined)) {
    const { callService } = await import('../../service/callService.js')
    const served = await callService({ dir, store }, 'snapshot', message === undefined ? {} : { message })
    if (served) return served as SnapshotAgentResult
  }
  const { snapshotAgent } = await import('../../image/snapshotAgent.js')
  return snapshotAgent(options)
}

export const snapshotView: Rendering<SnapshotAgentResult> = {
  human: (r) => r.id,
  notes: (r) => [
    `${r.created ? 'snapshot' : 'nothing changed since HEAD'}: ${counted(r.files, 'file')}, ${formatBytes(r.bytes)}; read ${r.hashedFiles} (${formatBytes(r.hashedBytes)})`,
  ],
  warnings: (r) => r.skipped.map((path) => `forkpoint: skipped ${quotePath(path)} (not a file, directory or symlink)`),
}

/** `forkpoint snapshot --branch NAME`: a fork's branch as its child's next image (moving the child's ref, not HEAD). */
export async function snapshotBranchCommand({ branch, ...options }: Omit<SnapshotOptions, 'onProgress'> & { branch: string }): Promise<SnapshotForkBranchResult> {
  const layerOptions = (['tag', 'env', 'keepEnv', 'scrubEnv', 'effects', 'model'] as const).filter((o) => options[o] !== undefined)
  if (layerOptions.length > 0 || typeof options.trace === 'string')
    throw new UsageError(`snapshot --branch takes only -m, --agent and --allow-external-symlinks (the other layers are the child's)`)
  const { snapshotForkBranch } = await import('../../image/snapshotForkBranch.js')
  return snapshotForkBranch({
    dir: options.dir,
    store: options.store,
    branch,
    message: options.message,
    agent: options.agent,
    allowExternalSymlinks: options.allowExternalSymlinks,
  })
}

export const snapshotBranchView: Rendering<SnapshotForkBranchResult> = {
  human: (r) => r.id,
  notes: (r) => (r.created ? [] : [`nothing changed since ${r.ref}`]),
}

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
    .option('--model <dir>', 'the model layer: a directory of adapter or model files (safetensors stored tensor by tensor)')
    .option('--branch <name>', "snapshot a fork's branch (fork --materialize) as its child's next image, moving the child's ref, not HEAD")
    .action(async ({ branch, ...opts }: Omit<SnapshotOptions, keyof Where | 'onProgress'> & { branch?: string }, cmd: Command) => {
      const flags = commonFlags(cmd)
      if (branch !== undefined) return print(flags, await snapshotBranchCommand({ dir: flags.dir, store: flags.store, ...opts, branch }), snapshotBranchView)
      const bar = progressBar('hashing', flags.json)
      const result = await snapshotCommand({ dir: flags.dir, store: flags.store, ...opts, onProgress: bar.onProgress }).finally(() => bar.stop())
      print(flags, result, snapshotView)
    })
}
