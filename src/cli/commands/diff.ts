import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { formatChanges, short } from '../format.js'
import { emit } from '../output.js'

export function registerDiff(program: Command): void {
  common(program.command('diff <A> [B]'))
    .description('file-level changes from snapshot A to snapshot B (default: the workspace)')
    .action(async (a: string, b: string | undefined, _opts, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { diffSnapshots } = await import('../../world/diffSnapshots.js')
      const result = await diffSnapshots({ a, b, dir: flags.dir, store: flags.store })
      emit(flags, result, (r) => {
        const s = r.summary
        const head = `${short(r.a)} -> ${r.b ? short(r.b) : 'workspace'}: ${s.added} added, ${s.deleted} deleted, ${s.modified} modified, ${s.mode} mode, ${s.typechange} type`
        return r.changes.length ? `${head}\n${formatChanges(r.changes)}` : `${head}\nno differences`
      })
      if (result.changes.length > 0) process.exitCode = 1
    })
}
