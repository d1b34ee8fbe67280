import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { formatBytes } from '../format.js'
import { emit, note } from '../output.js'
import { progressBar } from '../progress.js'
import { quotePath } from '../../world/quotePath.js'

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
    .action(async (opts: { message?: string; agent?: string; tag?: string; respectGitignore?: boolean; allowEmpty?: boolean; allowExternalSymlinks?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { snapshotWorkspace } = await import('../../world/snapshotWorkspace.js')
      const bar = progressBar('hashing', flags.json)
      const result = await snapshotWorkspace({ dir: flags.dir, store: flags.store, ...opts, onProgress: bar.onProgress }).finally(() => bar.stop())
      for (const path of result.skipped) process.stderr.write(`forkpoint: skipped ${quotePath(path)} (not a file, directory or symlink)\n`)
      if (!flags.json) note(`${result.created ? 'snapshot' : 'nothing changed since HEAD'}: ${result.files} files, ${formatBytes(result.bytes)}; read ${result.hashedFiles} (${formatBytes(result.hashedBytes)})`)
      emit(flags, result, (r) => r.id)
    })
}
