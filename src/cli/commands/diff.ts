import { once } from 'node:events'
import type { Command } from 'commander'
import type { DiffOutput } from '../../image/diffImagesOrRuns.js'
import { renderRunDiff } from '../../trace/diff/renderRunDiff.js'
import { type Where, common, commonFlags } from '../context.js'
import { formatChanges, short } from '../../operations/text/format.js'
import { print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'

export type { DiffOutput }

/** `forkpoint diff A [B]`: run ids and *.run.json files diff as runs, anything else as snapshots (B default: the workspace). */
export async function diffCommand(options: Where & { a: string; b?: string; window?: number; patch?: boolean }): Promise<DiffOutput> {
  const { diffImagesOrRuns } = await import('../../image/diffImagesOrRuns.js')
  return diffImagesOrRuns(options)
}

export const diffView: Rendering<DiffOutput> = {
  human(r) {
    if ('trace' in r) return renderRunDiff(r.trace)
    if ('patch' in r) return r.patch
    const s = r.summary
    const head = `${short(r.a)} -> ${r.b ? short(r.b) : 'workspace'}: ${s.added} added, ${s.deleted} deleted, ${s.modified} modified, ${s.mode} mode, ${s.typechange} type`
    return r.changes.length ? `${head}\n${formatChanges(r.changes)}` : `${head}\nno differences`
  },
  exit: (r) => (('trace' in r ? r.trace.status !== 'exact_match' : r.changes.length > 0) ? 1 : 0),
}

/** `diff A B --patch` on a terminal or a pipe: the patch written file by file as it is made, never held whole; exit 1 when it is not empty. */
async function streamPatch(where: Where & { a: string; b?: string | undefined }): Promise<void> {
  const { patchSnapshots } = await import('../../world/diff/patchSnapshots.js')
  let written = false
  for await (const section of patchSnapshots(where)) {
    written = true
    if (!process.stdout.write(section)) await once(process.stdout, 'drain')
  }
  process.exitCode = written ? 1 : 0
}

export function registerDiff(program: Command): void {
  common(program.command('diff <A> [B]'))
    .description(
      'snapshots: file-level changes from A to B (default: the workspace), or with --patch a unified diff; runs (run ids or *.run.json): the first divergence of B from A',
    )
    .option('-p, --patch', "snapshots: a unified diff in git's format (3 lines of context; binary files and files over 8 MiB named, not shown)")
    .option('--window <n>', 'runs: how many steps ahead to look when resyncing past inserted or deleted steps', (v) => Number.parseInt(v, 10), 10)
    .action(async (a: string, b: string | undefined, opts: { window: number; patch?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const where = { dir: flags.dir, store: flags.store, a, b }
      const { isRunSpec } = await import('../../trace/diff/compareRuns.js')
      if (opts.patch && !flags.json && !isRunSpec(a)) return streamPatch(where)
      print(flags, await diffCommand({ ...where, window: opts.window, patch: opts.patch ?? false }), diffView)
    })
}
