import type { Command } from 'commander'
import type { RunDiff } from '../../trace/diff/diffRuns.js'
import { renderRunDiff } from '../../trace/diff/renderRunDiff.js'
import type { SnapshotDiff } from '../../world/diffSnapshots.js'
import { type Where, common, commonFlags } from '../context.js'
import { formatChanges, short } from '../format.js'
import { type View, print } from '../output.js'

/** Snapshots compared file by file, or runs to their first divergence. */
export type DiffOutput = SnapshotDiff | { trace: RunDiff }

/** `forkpoint diff A [B]`: run ids and *.run.json files diff as runs, anything else as snapshots (B default: the workspace). */
export async function diffCommand({ dir, store, a, b, window }: Where & { a: string; b?: string; window?: number }): Promise<DiffOutput> {
  const { isRunSpec, compareRuns } = await import('../../trace/diff/compareRuns.js')
  if (isRunSpec(a) && (b === undefined || isRunSpec(b))) return { trace: await compareRuns({ a, b, window, dir, store }) }
  const { diffSnapshots } = await import('../../world/diffSnapshots.js')
  return diffSnapshots({ a, b, dir, store })
}

export const diffView: View<DiffOutput> = {
  human(r) {
    if ('trace' in r) return renderRunDiff(r.trace)
    const s = r.summary
    const head = `${short(r.a)} -> ${r.b ? short(r.b) : 'workspace'}: ${s.added} added, ${s.deleted} deleted, ${s.modified} modified, ${s.mode} mode, ${s.typechange} type`
    return r.changes.length ? `${head}\n${formatChanges(r.changes)}` : `${head}\nno differences`
  },
  exit: (r) => (('trace' in r ? r.trace.status !== 'exact_match' : r.changes.length > 0) ? 1 : 0),
}

export function registerDiff(program: Command): void {
  common(program.command('diff <A> [B]'))
    .description('snapshots: file-level changes from A to B (default: the workspace); runs (run ids or *.run.json): the first divergence of B from A')
    .option('--window <n>', 'runs: how many steps ahead to look when resyncing past inserted or deleted steps', (v) => Number.parseInt(v, 10), 10)
    .action(async (a: string, b: string | undefined, opts: { window: number }, cmd: Command) => {
      const flags = commonFlags(cmd)
      print(flags, await diffCommand({ dir: flags.dir, store: flags.store, a, b, window: opts.window }), diffView)
    })
}
