import { z } from 'zod'
import { UsageError } from '../../errors/index.js'
import { DEFAULT_DENSITY, DEFAULT_DROP_RATE, MODEL_MERGE_METHODS, type ModelMergeMethod, type ModelMergeOptions } from '../../image/model/mergeTensors.js'
import { definedFields } from '../../util/definedFields.js'
import { defineOperation } from '../operation.js'
import type { Rendering } from '../rendering.js'
import { digest, keepLeftovers, snapshotId } from '../schemas.js'
import { pc } from '../text/colors.js'
import { short } from '../text/format.js'
import { heldBackLines } from '../text/heldBackLines.js'

const layerReport = z.object({
  layer: z.string(),
  outcome: z.enum(['unchanged', 'ours', 'theirs', 'merged', 'conflict', 'dropped']),
  summary: z.string().describe('one line for people: world: clean (3 paths)'),
})
const heldBack = z.array(z.string()).describe('git config, hooks and .git files an image from another store brought, left as the workspace had them (trustGit takes them)')
const merged = { layers: z.array(layerReport), ref: z.string().describe('the ref the merge moved (or would have)'), inProgress: z.boolean(), heldBack }
const pathConflict = z.object({
  path: z.string(),
  kind: z.enum(['content', 'add/add', 'modify/delete', 'type', 'mode', 'rename/rename', 'rename/delete']),
  kept: z.object({ ours: z.string().nullable(), theirs: z.string().nullable() }).describe("where each side's version is (null: deleted there)"),
})
const mergeResult = z.discriminatedUnion('outcome', [
  z.object({ outcome: z.literal('up-to-date'), id: digest, ...merged }),
  z.object({ outcome: z.literal('fast-forward'), id: digest, ...merged }),
  z.object({ outcome: z.literal('merged'), id: digest, bases: z.array(digest), ...merged }),
  z.object({
    outcome: z.literal('conflict'),
    tree: digest.describe("the world with both sides' versions, in the workspace for a human to finish"),
    bases: z.array(digest),
    conflicts: z.array(pathConflict),
    layerConflicts: z.array(z.string()),
    decided: z
      .object({
        env: z.record(z.string(), z.string()),
        // a snapshot's other fields as they go into it: digests, or any field a newer writer added
        layers: z.record(z.string(), z.unknown()),
      })
      .describe('what the merge decided beyond the world: the env and every other layer'),
    ...merged,
  }),
])

const allowExternalSymlinks = z.boolean().optional().describe('allow symlinks that point outside the tree')

/** How the command line shows each of the three. */
const mergeRendering: Rendering<z.infer<typeof mergeResult>> = {
  human(r) {
    const held = heldBackLines(r.heldBack, 'forkpoint checkout FROM --trust-git -- PATH…')
    if (r.outcome === 'conflict') return `${layerLines(r.layers)}conflict: ${r.inProgress ? 'the merge is in progress in the workspace' : `${r.ref} unchanged`}${held}`
    if (r.outcome === 'up-to-date') return 'already up to date'
    if (r.outcome === 'fast-forward') return `fast-forward: ${r.ref} at ${short(r.id)}${held}`
    return `${layerLines(r.layers)}merged: ${r.ref} at ${short(r.id)}${held}`
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

function layerLines(layers: ReadonlyArray<{ summary: string }>): string {
  return layers.map((l) => `${l.summary}\n`).join('')
}

export const merge = defineOperation({
  name: 'merge',
  description:
    'Merge an image into HEAD and the workspace, or into a head or tag in the store only (into), layer by layer (files three-way); a conflict (outcome "conflict") leaves a merge into HEAD in progress: fix the files, then merge_continue, or merge_abort.',
  input: {
    from: snapshotId,
    into: z.string().min(1).optional().describe('merge into this head or tag in the store only (no files touched)'),
    force: z.boolean().optional().describe('with into a tag: move the tag (refused otherwise, as tag does)'),
    allowUnrelated: z.boolean().optional().describe('merge images that share no history, against an empty base'),
    message: z.string().optional().describe('message of the merge snapshot'),
    allowExternalSymlinks,
    findRenames: z
      .union([z.literal(true), z.number().int().min(0).max(100)], { error: 'a similarity from 0 to 100 (percent), or true for the default' })
      .optional()
      .describe('a file deleted on one side and one added there are a rename when at least N% alike (default 50)'),
    renames: z.boolean().optional().describe('look for renames (the default); false: a renamed file is a deletion and an addition'),
    modelMerge: z.enum(MODEL_MERGE_METHODS).optional().describe('merge a model layer both sides changed, tensor by tensor, with this method'),
    density: z.number().min(0).max(1).optional().describe(`ties: the fraction of each side's changes kept, by magnitude (default ${DEFAULT_DENSITY})`),
    dropRate: z.number().min(0).max(1).optional().describe(`dare, dare-ties: the probability each change is dropped (default ${DEFAULT_DROP_RATE})`),
    seed: z.number().int().min(0).optional().describe("dare, dare-ties: the drops' seed (default 0)"),
    weights: z
      .array(z.number().min(0))
      .length(2)
      .refine((pair) => pair.length !== 2 || pair[0]! + pair[1]! > 0, 'ours and theirs are not both 0')
      .optional()
      .describe('weights of ours and theirs (default 1,1)'),
    trustGit: z.boolean().optional().describe("take an image from another store's .git/config, .git/hooks/ and .git files (held back otherwise)"),
  },
  output: mergeResult,
  annotations: { readOnly: false, destructive: false, idempotent: false },
  local: {
    fields: ['allowExternalSymlinks', 'trustGit'],
    why: "it lets the merge write links that lead out of the workspace, to files of the caller's machine, or what runs code on the caller's next git command",
  },
  cli: { usage: 'merge [from]', short: { force: 'f', message: 'm' }, negatable: ['renames'], rendering: mergeRendering },
  async run(where, { from, into, force, allowUnrelated, message, allowExternalSymlinks, trustGit, findRenames, renames, ...model }, { env }) {
    const { merge } = await import('../../image/merge.js')
    const options = definedFields({
      into,
      force,
      allowUnrelated,
      message,
      allowExternalSymlinks,
      trustGit,
      modelMerge: modelMergeOf(model),
      renames: renameDetection(findRenames, renames),
    })
    return merge({ ...where, from, env, ...options })
  },
})

/** The rename detection asked for: undefined for the default. @throws {UsageError} for a similarity given with renames off */
function renameDetection(findRenames: true | number | undefined, renames: boolean | undefined): false | { threshold: number } | undefined {
  if (renames === false) {
    if (findRenames !== undefined) throw new UsageError('merge: findRenames (--find-renames) and renames: false (--no-renames) contradict each other')
    return false
  }
  return typeof findRenames === 'number' ? { threshold: findRenames } : undefined
}

/** The model merge asked for. @throws {UsageError} for its settings given without a method */
function modelMergeOf({ modelMerge, density, dropRate, seed, weights }: ModelMergeFields): ModelMergeOptions | undefined {
  if (modelMerge === undefined) {
    if ([density, dropRate, seed, weights].some((v) => v !== undefined)) throw new UsageError('merge: density, dropRate, seed and weights go with modelMerge (--model-merge)')
    return undefined
  }
  return { method: modelMerge, ...definedFields({ density, dropRate, seed, weights: weights && ([weights[0]!, weights[1]!] as [number, number]) }) }
}

interface ModelMergeFields {
  modelMerge?: ModelMergeMethod | undefined
  density?: number | undefined
  dropRate?: number | undefined
  seed?: number | undefined
  weights?: number[] | undefined
}

export const mergeContinue = defineOperation({
  name: 'merge_continue',
  description: 'Finish a merge stopped on conflicts, once the files are fixed (refused while markers or, unless keepLeftovers, NAME~LABEL files remain).',
  input: { keepLeftovers, allowExternalSymlinks },
  output: z.object({ outcome: z.literal('merged'), id: digest, bases: z.array(digest), layers: z.array(layerReport) }),
  annotations: { readOnly: false, destructive: false, idempotent: false },
  local: { fields: ['allowExternalSymlinks'], why: "it lets the merge snapshot links that lead out of the workspace, to files of the caller's machine" },
  cli: { usage: 'merge [from]', selectedBy: 'continue', rendering: { human: (r) => `${layerLines(r.layers)}merged: ${short(r.id)}` } },
  async run(where, { keepLeftovers, allowExternalSymlinks }) {
    const { continueMerge } = await import('../../image/continueMerge.js')
    return continueMerge({ ...where, keepLeftovers: keepLeftovers ?? false, ...definedFields({ allowExternalSymlinks }) })
  },
})

export const mergeAbort = defineOperation({
  name: 'merge_abort',
  description: 'Undo a merge stopped on conflicts: the workspace back to HEAD exactly.',
  input: {},
  output: z.object({ head: z.string().describe('HEAD, the image the workspace is back at'), heldBack }),
  annotations: { readOnly: false, destructive: true, idempotent: true },
  cli: {
    usage: 'merge [from]',
    selectedBy: 'abort',
    rendering: { human: (r) => `merge aborted: the workspace is back at ${short(r.head)}${heldBackLines(r.heldBack, 'forkpoint checkout HEAD --force --trust-git')}` },
  },
  async run(where) {
    const { abortMerge } = await import('../../image/abortMerge.js')
    return abortMerge(where)
  },
})
