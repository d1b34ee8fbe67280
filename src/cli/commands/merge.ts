import type { Command } from 'commander'
import { UsageError } from '../../errors/index.js'
import type { LayerReport } from '../../image/mergeImages.js'
import { common, commonFlags } from '../context.js'
import { short } from '../format.js'
import { emit, note } from '../output.js'

interface MergeOpts {
  into?: string
  allowUnrelated?: boolean
  message?: string
  continue?: boolean
  abort?: boolean
  allowExternalSymlinks?: boolean
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
    .action(async (from: string | undefined, opts: MergeOpts, cmd: Command) => {
      const flags = commonFlags(cmd)
      const where = { dir: flags.dir, ...(flags.store ? { store: flags.store } : {}) }
      if ([from !== undefined, opts.continue, opts.abort].filter(Boolean).length !== 1) throw new UsageError('merge: give FROM, --continue or --abort (one of them)')
      if (opts.abort) {
        const { abortMerge } = await import('../../image/abortMerge.js')
        emit(flags, await abortMerge(where), (r) => `merge aborted: the workspace is back at ${short(r.head)}`)
        return
      }
      if (opts.continue) {
        const { continueMerge } = await import('../../image/continueMerge.js')
        emit(flags, await continueMerge({ ...where, allowExternalSymlinks: opts.allowExternalSymlinks }), (r) => `${layerLines(r.layers)}merged: ${short(r.id)}`)
        return
      }
      const { merge } = await import('../../image/merge.js')
      const result = await merge({ ...where, from: from!, into: opts.into, allowUnrelated: opts.allowUnrelated, message: opts.message, allowExternalSymlinks: opts.allowExternalSymlinks })
      emit(flags, result, (r) => {
        if (r.outcome === 'conflict') return `${layerLines(r.layers)}conflict: ${r.inProgress ? 'the merge is in progress in the workspace' : `${r.ref} unchanged`}`
        if (r.outcome === 'up-to-date') return 'already up to date'
        if (r.outcome === 'fast-forward') return `fast-forward: ${r.ref} at ${short(r.id)}`
        return `${layerLines(r.layers)}merged: ${r.ref} at ${short(r.id)}`
      })
      if (result.outcome === 'conflict') {
        note(result.inProgress ? "merge stopped on conflicts: fix the files, then 'forkpoint merge --continue', or 'forkpoint merge --abort'" : `merge into ${result.ref} has conflicts: nothing was written`)
        process.exitCode = 3
      }
    })
}

function layerLines(layers: LayerReport[]): string {
  return layers.map((l) => `${l.summary}\n`).join('')
}
