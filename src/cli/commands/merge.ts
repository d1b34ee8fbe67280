import type { Command } from 'commander'
import { UsageError } from '../../errors/index.js'
import type { ContinueMergeResult } from '../../image/continueMerge.js'
import type { MergeArgs as MergeResultArgs, MergeResult } from '../../image/merge.js'
import type { LayerReport } from '../../image/mergeImages.js'
import { DEFAULT_DENSITY, DEFAULT_DROP_RATE, MODEL_MERGE_METHODS, type ModelMergeMethod, type ModelMergeOptions } from '../../image/model/mergeTensors.js'
import { type Where, common, commonFlags } from '../context.js'
import { short } from '../../operations/text/format.js'
import { pc, print } from '../output.js'
import type { Rendering } from '../../operations/rendering.js'

export interface MergeOptions extends Where {
  from: string
  into?: string
  force?: boolean
  allowUnrelated?: boolean
  message?: string
  allowExternalSymlinks?: boolean
  modelMerge?: ModelMergeOptions
  renames?: MergeResultArgs['renames']
}

/** `forkpoint merge FROM`: image FROM merged into HEAD (the workspace) or, `into`, a branch or tag in the store only. */
export async function mergeCommand(options: MergeOptions): Promise<MergeResult> {
  const { merge } = await import('../../image/merge.js')
  return merge({ ...options, env: process.env })
}

/** `forkpoint merge --continue`: a merge stopped on conflicts finished, once the files are fixed. */
export async function mergeContinueCommand(options: Where & { allowExternalSymlinks?: boolean; keepLeftovers?: boolean }): Promise<ContinueMergeResult> {
  const { continueMerge } = await import('../../image/continueMerge.js')
  return continueMerge(options)
}

/** `forkpoint merge --abort`: a merge stopped on conflicts undone, the workspace back to HEAD exactly. */
export async function mergeAbortCommand(where: Where): Promise<{ head: string }> {
  const { abortMerge } = await import('../../image/abortMerge.js')
  return abortMerge(where)
}

export const mergeView: Rendering<MergeResult> = {
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

export const mergeContinueView: Rendering<ContinueMergeResult> = { human: (r) => `${layerLines(r.layers)}merged: ${short(r.id)}` }

export const mergeAbortView: Rendering<{ head: string }> = { human: (r) => `merge aborted: the workspace is back at ${short(r.head)}` }

function layerLines(layers: LayerReport[]): string {
  return layers.map((l) => `${l.summary}\n`).join('')
}

export function registerMerge(program: Command): void {
  common(program.command('merge [FROM]'))
    .description('merge image FROM into HEAD (the workspace) or into a head or tag (--into), layer by layer')
    .option('--into <ref>', 'merge into this head or tag in the store only (no files touched)')
    .option('-f, --force', 'with --into a tag: move the tag (refused otherwise, as tag does)')
    .option('--allow-unrelated', 'merge images that share no history, against an empty base')
    .option('-m, --message <msg>', 'message of the merge snapshot')
    .option('--continue', 'finish a merge stopped on conflicts, once the files are fixed')
    .option('--keep-leftovers', '--continue: snapshot the versions kept beside conflicts (NAME~LABEL) that are still there, instead of refusing')
    .option('--abort', 'undo a merge stopped on conflicts: the workspace back to HEAD exactly')
    .option('--allow-external-symlinks', 'allow symlinks that point outside the tree')
    .option('--find-renames [n]', 'a file deleted on one side and one added there are a rename when at least N% alike (default 50)')
    .option('--no-renames', 'look for no renames: a renamed file is a deletion and an addition')
    .option('--model-merge <method>', `merge a model layer both sides changed: ${MODEL_MERGE_METHODS.join('|')}`)
    .option('--density <d>', `ties: the fraction of each side's changes kept, by magnitude (default ${DEFAULT_DENSITY})`)
    .option('--drop-rate <p>', `dare, dare-ties: the probability each change is dropped (default ${DEFAULT_DROP_RATE})`)
    .option('--seed <n>', "dare, dare-ties: the drops' seed (default 0)")
    .option('--weights <a,b>', 'weights of ours and theirs (default 1,1)')
    .action(
      async (
        from: string | undefined,
        opts: Omit<MergeOptions, keyof Where | 'from' | 'modelMerge' | 'renames'> &
          ModelMergeFlags &
          RenameFlags & { continue?: boolean; abort?: boolean; keepLeftovers?: boolean },
        cmd: Command,
      ) => {
        const flags = commonFlags(cmd)
        const where = { dir: flags.dir, ...(flags.store ? { store: flags.store } : {}) }
        if ([from !== undefined, opts.continue, opts.abort].filter(Boolean).length !== 1) throw new UsageError('merge: give FROM, --continue or --abort (one of them)')
        const { continue: _continue, abort: _abort, keepLeftovers: _keep, modelMerge, density, dropRate, seed, weights, findRenames, renames, ...mergeOpts } = opts
        const model = modelMergeOptions({ modelMerge, density, dropRate, seed, weights })
        const renameDetection = renameOptions({ findRenames, renames })
        if (opts.abort) print(flags, await mergeAbortCommand(where), mergeAbortView)
        else if (opts.continue)
          print(flags, await mergeContinueCommand({ ...where, allowExternalSymlinks: opts.allowExternalSymlinks, keepLeftovers: opts.keepLeftovers }), mergeContinueView)
        else print(flags, await mergeCommand({ ...where, ...mergeOpts, ...(model ? { modelMerge: model } : {}), ...renameDetection, from: from! }), mergeView)
      },
    )
}

interface RenameFlags {
  findRenames?: string | true
  /** false under --no-renames */
  renames?: boolean
}

/** The rename detection the flags ask for (none given: the default); a usage error (exit 2) for a percentage that is not one. */
function renameOptions({ findRenames, renames }: RenameFlags): Pick<MergeOptions, 'renames'> {
  if (renames === false) {
    if (findRenames !== undefined) throw new UsageError('merge: --find-renames and --no-renames contradict each other')
    return { renames: false }
  }
  if (findRenames === undefined || findRenames === true) return {}
  const percent = /^(\d{1,3})%?$/.exec(findRenames)
  if (!percent || Number(percent[1]) > 100) throw new UsageError(`merge: --find-renames takes a similarity from 0 to 100 (percent), not ${JSON.stringify(findRenames)}`)
  return { renames: { threshold: Number(percent[1]) } }
}

interface ModelMergeFlags {
  modelMerge?: string
  density?: string
  dropRate?: string
  seed?: string
  weights?: string
}

/** The model merge the flags ask for; usage errors (exit 2) for a method, number or pair that is not one. */
function modelMergeOptions(flags: ModelMergeFlags): ModelMergeOptions | undefined {
  const { modelMerge, density, dropRate, seed, weights } = flags
  if (modelMerge === undefined) {
    if ([density, dropRate, seed, weights].some((v) => v !== undefined)) throw new UsageError('merge: --density, --drop-rate, --seed and --weights go with --model-merge')
    return undefined
  }
  if (!(MODEL_MERGE_METHODS as readonly string[]).includes(modelMerge))
    throw new UsageError(`merge: --model-merge must be one of ${MODEL_MERGE_METHODS.join(', ')}, not ${JSON.stringify(modelMerge)}`)
  const fraction = (flag: string, value: string | undefined) => {
    if (value === undefined) return undefined
    const n = Number(value)
    if (value.trim() === '' || !(n >= 0 && n <= 1)) throw new UsageError(`merge: ${flag} must be a number from 0 to 1, not ${JSON.stringify(value)}`)
    return n
  }
  const pair = weights?.split(',').map((w) => (w.trim() === '' ? NaN : Number(w)))
  if (weights !== undefined && (pair!.length !== 2 || !pair!.every((w) => Number.isFinite(w) && w >= 0) || pair![0]! + pair![1]! === 0))
    throw new UsageError(`merge: --weights must be two numbers, ours and theirs (not both 0), such as 1,1, not ${JSON.stringify(weights)}`)
  if (seed !== undefined && !/^\d+$/.test(seed)) throw new UsageError(`merge: --seed must be a whole number, not ${JSON.stringify(seed)}`)
  const d = fraction('--density', density)
  const p = fraction('--drop-rate', dropRate)
  return {
    method: modelMerge as ModelMergeMethod,
    ...(d !== undefined ? { density: d } : {}),
    ...(p !== undefined ? { dropRate: p } : {}),
    ...(seed !== undefined ? { seed: Number(seed) } : {}),
    ...(pair ? { weights: [pair[0]!, pair[1]!] as [number, number] } : {}),
  }
}
