import type { Command } from 'commander'
import { common, commonFlags } from '../context.js'
import { formatChanges, short } from '../format.js'
import { emit } from '../output.js'

export function registerDiff(program: Command): void {
  common(program.command('diff <A> [B]'))
    .description('snapshots: file-level changes from A to B (default: the workspace); runs (run ids or *.run.json): the first divergence of B from A')
    .option('--window <n>', 'runs: how many steps ahead to look when resyncing past inserted or deleted steps', (v) => Number.parseInt(v, 10), 10)
    .action(async (a: string, b: string | undefined, opts: { window: number }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const { isRunSpec } = await import('../../trace/compareRuns.js')
      if (isRunSpec(a) && (b === undefined || isRunSpec(b))) return diffRunsCommand(flags, a, b, opts.window)
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

async function diffRunsCommand(flags: ReturnType<typeof commonFlags>, a: string, b: string | undefined, window: number): Promise<void> {
  const { compareRuns } = await import('../../trace/compareRuns.js')
  const { renderRunDiff } = await import('../../trace/renderRunDiff.js')
  const trace = await compareRuns({ a, b, window, dir: flags.dir, store: flags.store })
  emit(flags, { trace }, (r) => renderRunDiff(r.trace))
  if (trace.status !== 'exact_match') process.exitCode = 1
}
