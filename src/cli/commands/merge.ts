import type { Command } from 'commander'
import { UsageError } from '../../errors/index.js'
import type { ContinueMergeResult } from '../../image/continueMerge.js'
import type { MergeResult } from '../../image/merge.js'
import type { LayerReport } from '../../image/mergeImages.js'
import { type Where, common, commonFlags } from '../context.js'
import { short } from '../format.js'
import { type View, pc, print } from '../output.js'

export interface MergeOptions extends Where {
  from: string
  into?: string
  allowUnrelated?: boolean
  message?: string
  allowExternalSymlinks?: boolean
}

/** `forkpoint merge FROM`: image FROM merged into HEAD (the workspace) or, `into`, a branch or tag in the store only. */
export async function mergeCommand(options: MergeOptions): Promise<MergeResult> {
  const { merge } = await import('../../image/merge.js')
  return merge(options)
}

/** `forkpoint merge --continue`: a merge stopped on conflicts finished, once the files are fixed. */
export async function mergeContinueCommand(options: Where & { allowExternalSymlinks?: boolean }): Promise<ContinueMergeResult> {
  const { continueMerge } = await import('../../image/continueMerge.js')
  return continueMerge(options)
}

/** `forkpoint merge --abort`: a merge stopped on conflicts undone, the workspace back to HEAD exactly. */
export async function mergeAbortCommand(where: Where): Promise<{ head: string }> {
  const { abortMerge } = await import('../../image/abortMerge.js')
  return abortMerge(where)
}

export const mergeView: View<MergeResult> = {
  human(r) {
    if (r.outcome === 'conflict') return `${layerLines(r.layers)}conflict: ${r.inProgress ? 'the merge is in progress in the workspace' : `${r.ref} unchanged`}`
    if (r.outcome === 'up-to-date') return 'already up to date'
    if (r.outcome === 'fast-forward') return `fast-forward: ${r.ref} at ${short(r.id)}`
    return `${layerLines(r.layers)}merged: ${r.ref} at ${short(r.id)}`
  },
  warnings(r) {
    if (r.outcome !== 'conflict') return []
    return [
      pc.dim(
        r.inProgress
          ? "merge stopped on conflicts: fix the files, then 'forkpoint merge --continue', or 'forkpoint merge --abort'"
          : `merge into ${r.ref} has conflicts: nothing was written`,
      ),
    ]
  },
  exit: (r) => (r.outcome === 'conflict' ? 3 : 0),
}

export const mergeContinueView: View<ContinueMergeResult> = { human: (r) => `${layerLines(r.layers)}merged: ${short(r.id)}` }

export const mergeAbortView: View<{ head: string }> = { human: (r) => `merge aborted: the workspace is back at ${short(r.head)}` }

function layerLines(layers: LayerReport[]): string {
  return layers.map((l) => `${l.summary}\n`).join('')
}

export function registerMerge(program: Command): void {
  common(program.command('merge [FROM]'))
    .description('merge image FROM into HEAD (the workspace) or into a head or tag (--into), layer by layer')
    .option('--into <ref>', 'merge into this head or tag in the store only (no files touched)')
    .option('--allow-unrelated', 'merge images that share no history, against an empty base')
    .option('-m, --message <msg>', 'message of the merge snapshot')
    .option('--continue', 'finish a merge stopped on conflicts, once the files are fixed')
    .option('--abort', 'undo a merge stopped on conflicts: the workspace back to HEAD exactly')
    .option('--allow-external-symlinks', 'allow symlinks that point outside the tree')
    .action(async (from: string | undefined, opts: Omit<MergeOptions, keyof Where | 'from'> & { continue?: boolean; abort?: boolean }, cmd: Command) => {
      const flags = commonFlags(cmd)
      const where = { dir: flags.dir, ...(flags.store ? { store: flags.store } : {}) }
      if ([from !== undefined, opts.continue, opts.abort].filter(Boolean).length !== 1) throw new UsageError('merge: give FROM, --continue or --abort (one of them)')
      const { continue: _continue, abort: _abort, ...mergeOpts } = opts
      if (opts.abort) print(flags, await mergeAbortCommand(where), mergeAbortView)
      else if (opts.continue) print(flags, await mergeContinueCommand({ ...where, allowExternalSymlinks: opts.allowExternalSymlinks }), mergeContinueView)
      else print(flags, await mergeCommand({ ...where, ...mergeOpts, from: from! }), mergeView)
    })
}
