import { z } from 'zod'
import { type AnyOperation, type Operation, defineOperation } from '../operation.js'
import { fileRule } from '../requestPolicy.js'
import { branchInfo, change, digest, effectsListing, forkOrigin, jsonValue, runDiff, runSummary, snapshotId as id, stepError, stepType, treeListing } from '../schemas.js'

const run = z.string().min(1).describe('a run id (run-…), latest, or an image whose trace layer to read')
const storedRun = z
  .string()
  .regex(/^run-[0-9a-f]{1,20}$/, 'a run id (run-…)')
  .describe('a run id (run-…)')
// query parameters arrive as text
const count = (max: number) => z.coerce.number().int().min(0).max(max)

const READS = { readOnly: true, destructive: false, idempotent: true }
const WEB_VIEW_ONLY = { only: ['http'], why: "the web view's reads (`forkpoint ui`); the command line's log, show, runs, diff and effects give the same" } as const

const graphNode = z.object({
  id: digest,
  parents: z.array(digest),
  message: z.string(),
  agent: z.string().nullable(),
  createdAt: z.string(),
  refs: z.array(z.string()).describe('refs that point here (HEAD, main, tag: v1)'),
  fork: forkOrigin.nullable().describe('set on the children fork made: which child of which image'),
  live: z.array(z.string()).describe("live branches that started from this image's files"),
  layers: z.array(
    z.object({
      layer: z.string(),
      id: digest,
      bytes: z.number().nullable().describe("the world's file bytes; another layer's stored object size, null when the store lacks it"),
      files: z.number().optional().describe("the world's regular files"),
    }),
  ),
})

const imageChanges = z.object({
  id: digest,
  parent: digest.nullable().describe('the parent compared with, null for a root image'),
  layers: z.array(
    z.object({
      layer: z.string(),
      before: digest.nullable(),
      after: digest.nullable(),
      changed: z.boolean(),
      summary: z.string().optional().describe("the trace layer: how the run differs from the parent's, in one line"),
    }),
  ),
  files: z.object({ total: z.number(), changes: z.array(change) }).describe("the world's changed paths, at most limit of them"),
})

const timelineStep = z.object({
  idx: z.number(),
  name: z.string(),
  type: stepType,
  // what the agent's call carried, as recorded: any JSON ('[encrypted]' for a sealed value)
  input: jsonValue,
  output: jsonValue,
  error: stepError.nullable(),
  startedAt: z.string(),
  durationMs: z.number(),
})

const runTimeline = z.object({
  runId: z.string(),
  entrypoint: z.string(),
  status: z.string(),
  startedAt: z.string(),
  endedAt: z.string(),
  redaction: z.string(),
  parent: z.string().nullable(),
  total: z.number(),
  offset: z.number(),
  steps: z.array(timelineStep),
})

const exploration = z.object({
  kind: z.literal('exploration'),
  schemaVersion: z.literal(1),
  id: z.string(),
  pattern: z.enum(['speculate', 'bestOfN', 'reflexion', 'treeOfThoughts', 'beamSearch', 'tournament']),
  status: z.enum(['committed', 'no-winner', 'cancelled', 'failed']),
  startedAt: z.string(),
  durationMs: z.number(),
  winner: z.number().nullable(),
  error: z.string().nullable(),
  candidates: z.array(
    z.object({
      index: z.number(),
      status: z.enum(['succeeded', 'failed', 'error', 'timeout', 'cancelled']),
      score: z.number().nullable(),
      durationMs: z.number(),
      error: z.string().nullable(),
      depth: z.number().nullable(),
      parent: z.number().nullable(),
    }),
  ),
  matches: z.array(z.object({ round: z.number(), a: z.number(), b: z.number(), winner: z.number() })),
})

const runningSandbox = z.object({
  id: z.string(),
  branch: z.string().nullable(),
  command: z.union([z.string(), z.array(z.string())]).describe('argv, or one string run by sh -c'),
  owner: z.object({ pid: z.number(), start: z.string() }),
  startedAt: z.string(),
})

const liveWork = z.object({
  branches: z.array(
    branchInfo.extend({
      running: z.array(runningSandbox),
      changes: z
        .array(z.object({ path: z.string(), type: z.enum(['put', 'delete']) }))
        .nullable()
        .describe('what the branch changed so far (at most limit paths), null with unreadable saying why'),
      totalChanges: z.number(),
      unreadable: z.string().nullable(),
    }),
  ),
  workspace: z.object({
    running: z.array(runningSandbox),
    changes: z.array(change).nullable().describe("the workspace's changes since HEAD while a sandboxed command runs in it"),
    totalChanges: z.number(),
  }),
})

/** A read of the web view: offered over HTTP only, as `GET /v1/view/<name>`, changing nothing. */
function webViewQuery<Input extends z.ZodRawShape, Output extends z.ZodType<object>>(query: Omit<Operation<Input, Output>, 'query' | 'annotations' | 'surfaces'>): AnyOperation {
  return defineOperation<Input, Output>({ ...query, query: true, annotations: READS, surfaces: WEB_VIEW_ONLY })
}

/**
 * The read-only queries the web view makes: `GET /v1/view/<name>?<args>`, the arguments as
 * query parameters. None of them changes the store or the workspace.
 */
export const WEB_VIEW_QUERIES: AnyOperation[] = [
  webViewQuery({
    name: 'graph',
    description: 'A page of the image graph: every image reachable from HEAD, a branch, a tag or a fork, newest first, with refs and layer sizes.',
    input: { offset: count(10_000_000).optional(), limit: count(1000).optional() },
    output: z.object({ total: z.number(), offset: z.number(), nodes: z.array(graphNode) }),
    async run(where, { offset, limit }, { cache }) {
      const { imageGraph } = await import('../../image/imageGraph.js')
      return imageGraph({ ...where, cache, ...(offset === undefined ? {} : { offset }), ...(limit === undefined ? {} : { limit }) })
    },
  }),
  webViewQuery({
    name: 'image',
    description: 'One image as the graph shows it: message, author, time, parents, refs, live branches, each layer with its size.',
    input: { id },
    output: graphNode,
    async run(where, { id }, { cache }) {
      const { imageNode } = await import('../../image/imageGraph.js')
      return imageNode({ ...where, id, cache })
    },
  }),
  webViewQuery({
    name: 'tree',
    description: "One directory of an image's file tree.",
    input: { id, path: z.string().optional().describe('slash-separated, default the root') },
    output: treeListing,
    async run(where, { id, path }) {
      const { listTree } = await import('../../world/tree/listTree.js')
      return listTree({ ...where, id, ...(path === undefined ? {} : { path }) })
    },
  }),
  webViewQuery({
    name: 'changes',
    description: 'What an image changed against a parent (default its first), layer by layer, with the changed paths.',
    input: { id, parent: id.optional() },
    output: imageChanges,
    async run(where, { id, parent }) {
      const { imageChanges } = await import('../../image/imageChanges.js')
      return imageChanges({ ...where, id, ...(parent === undefined ? {} : { parent }) })
    },
  }),
  webViewQuery({
    name: 'ledger',
    description: "An image's effects ledger, verified.",
    input: { id },
    output: effectsListing,
    async run(where, { id }, { env }) {
      const { listEffects } = await import('../../effects/listEffects.js')
      return listEffects({ ...where, id, env })
    },
  }),
  webViewQuery({
    name: 'runs',
    description: 'The recorded runs, newest first.',
    input: { limit: count(1000).optional() },
    output: z.object({ runs: z.array(runSummary) }),
    async run(where, { limit }) {
      const { listRuns } = await import('../../trace/core/listRuns.js')
      return { runs: await listRuns({ ...where, limit: limit ?? 100 }) }
    },
  }),
  webViewQuery({
    name: 'run',
    description: "A run's steps with their inputs and outputs (redacted values as the recording redacted them).",
    input: { run, offset: count(10_000_000).optional(), limit: count(1_000_000).optional() },
    output: runTimeline,
    async run(where, { run, offset, limit }) {
      const { runTimeline } = await import('../../trace/core/runTimeline.js')
      return runTimeline({ ...where, spec: run, ...(offset === undefined ? {} : { offset }), ...(limit === undefined ? {} : { limit }) })
    },
  }),
  webViewQuery({
    name: 'rundiff',
    description: 'Where run b first diverges from run a, with the JSON diff of that step.',
    input: { a: storedRun, b: storedRun },
    output: runDiff,
    async run(where, { a, b }, { policy, env }) {
      const { compareRuns } = await import('../../trace/diff/compareRuns.js')
      return compareRuns({ ...where, a, b, confine: fileRule(policy), env })
    },
  }),
  webViewQuery({
    name: 'explorations',
    description: 'The recorded explorations (speculate, explore, the patterns), newest first: candidates, status, scores, time, winner.',
    input: { limit: count(1000).optional() },
    output: z.object({ explorations: z.array(exploration) }),
    async run(where, { limit }) {
      const { listExplorations } = await import('../../patterns/explorations.js')
      return { explorations: await listExplorations({ ...where, ...(limit === undefined ? {} : { limit }) }) }
    },
  }),
  webViewQuery({
    name: 'branches',
    description:
      'The live branches with the paths each changed so far and the sandboxed commands running in each; the commands running sandboxed in the workspace itself, with its changes since HEAD.',
    input: {},
    output: liveWork,
    async run(where) {
      const { liveWork } = await import('../../branch/run/liveChanges.js')
      return liveWork(where)
    },
  }),
]
