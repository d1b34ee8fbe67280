import { z } from 'zod'
import { defineOperation } from '../operation.js'
import { digest, keepLeftovers, snapshotId } from '../schemas.js'

const layerReport = z.object({
  layer: z.string(),
  outcome: z.enum(['unchanged', 'ours', 'theirs', 'merged', 'conflict', 'dropped']),
  summary: z.string().describe('one line for people: world: clean (3 paths)'),
})
const merged = { layers: z.array(layerReport), ref: z.string().describe('the ref the merge moved (or would have)'), inProgress: z.boolean() }
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

const MERGE_COMMAND = {
  own: 'merge',
  why: "the command line also merges into a ref, finds renames by an optional similarity (`--find-renames [n]`: a flag whose value may be left out, which the table's form does not make) and merges model layers with the methods and weights it takes",
}

export const merge = defineOperation({
  name: 'merge',
  description:
    'Merge an image into HEAD and the workspace, layer by layer (files three-way); a conflict (outcome "conflict") leaves the merge in progress: fix the files, then merge_continue, or merge_abort.',
  input: { from: snapshotId },
  output: mergeResult,
  annotations: { readOnly: false, destructive: false, idempotent: false },
  cli: MERGE_COMMAND,
  async run(where, { from }, { env }) {
    const { merge } = await import('../../image/merge.js')
    return merge({ ...where, from, env })
  },
})

export const mergeContinue = defineOperation({
  name: 'merge_continue',
  description: 'Finish a merge stopped on conflicts, once the files are fixed (refused while markers or, unless keepLeftovers, NAME~LABEL files remain).',
  input: { keepLeftovers },
  output: z.object({ outcome: z.literal('merged'), id: digest, bases: z.array(digest), layers: z.array(layerReport) }),
  annotations: { readOnly: false, destructive: false, idempotent: false },
  cli: MERGE_COMMAND,
  async run(where, { keepLeftovers }) {
    const { continueMerge } = await import('../../image/continueMerge.js')
    return continueMerge({ ...where, keepLeftovers: keepLeftovers ?? false })
  },
})

export const mergeAbort = defineOperation({
  name: 'merge_abort',
  description: 'Undo a merge stopped on conflicts: the workspace back to HEAD exactly.',
  input: {},
  output: z.object({ head: z.string().describe('HEAD, the image the workspace is back at') }),
  annotations: { readOnly: false, destructive: true, idempotent: true },
  cli: MERGE_COMMAND,
  async run(where) {
    const { abortMerge } = await import('../../image/abortMerge.js')
    return abortMerge(where)
  },
})
