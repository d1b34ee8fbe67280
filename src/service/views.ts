import { z } from 'zod'
import { checkArgs, snapshotId as id } from './checkArgs.js'
import type { ImageCache } from '../image/imageGraph.js'
import type { StoreLocator } from '../store/findStore.js'

/** What a view gets besides its arguments: the service's cache of immutable objects. */
export interface ViewContext {
  cache: ImageCache
}

type View<Args> = (where: StoreLocator, args: Args, ctx: ViewContext) => Promise<object>

const run = z.string().min(1).describe('a run id (run-…), latest, or an image whose trace layer to read')
const storedRun = z
  .string()
  .regex(/^run-[0-9a-f]{1,20}$/, 'a run id (run-…)')
  .describe('a run id (run-…)')
const count = (max: number) => z.coerce.number().int().min(0).max(max)

/**
 * The read-only queries the web view (`forkpoint ui`) makes: `GET /v1/view/<name>?<args>`,
 * the arguments as query parameters. None of them changes the store or the workspace.
 */
export const VIEWS = {
  graph: {
    description: 'A page of the image graph: every image reachable from HEAD, a branch, a tag or a fork, newest first, with refs and layer sizes.',
    input: { offset: count(10_000_000).optional(), limit: count(1000).optional() },
    run: (async (where, { offset, limit }, { cache }) => {
      const { imageGraph } = await import('../image/imageGraph.js')
      return imageGraph({ ...where, cache, ...(offset === undefined ? {} : { offset }), ...(limit === undefined ? {} : { limit }) })
    }) as View<{ offset?: number | undefined; limit?: number | undefined }>,
  },
  image: {
    description: 'One image as the graph shows it: message, author, time, parents, refs, live branches, each layer with its size.',
    input: { id },
    run: (async (where, { id }, { cache }) => {
      const { imageNode } = await import('../image/imageGraph.js')
      return imageNode({ ...where, id, cache })
    }) as View<{ id: string }>,
  },
  tree: {
    description: "One directory of an image's file tree.",
    input: { id, path: z.string().optional().describe('slash-separated, default the root') },
    run: (async (where, { id, path }) => {
      const { listTree } = await import('../world/tree/listTree.js')
      return listTree({ ...where, id, ...(path === undefined ? {} : { path }) })
    }) as View<{ id: string; path?: string | undefined }>,
  },
  changes: {
    description: 'What an image changed against a parent (default its first), layer by layer, with the changed paths.',
    input: { id, parent: id.optional() },
    run: (async (where, { id, parent }) => {
      const { imageChanges } = await import('../image/imageChanges.js')
      return imageChanges({ ...where, id, ...(parent === undefined ? {} : { parent }) })
    }) as View<{ id: string; parent?: string | undefined }>,
  },
  ledger: {
    description: "An image's effects ledger, verified.",
    input: { id },
    run: (async (where, { id }) => {
      const { listEffects } = await import('../effects/listEffects.js')
      return listEffects({ ...where, id })
    }) as View<{ id: string }>,
  },
  runs: {
    description: 'The recorded runs, newest first.',
    input: { limit: count(1000).optional() },
    run: (async (where, { limit }) => {
      const { listRuns } = await import('../trace/core/listRuns.js')
      return { runs: await listRuns({ ...where, limit: limit ?? 100 }) }
    }) as View<{ limit?: number | undefined }>,
  },
  run: {
    description: "A run's steps with their inputs and outputs (redacted values as the recording redacted them).",
    input: { run, offset: count(10_000_000).optional(), limit: count(1_000_000).optional() },
    run: (async (where, { run, offset, limit }) => {
      const { runTimeline } = await import('../trace/core/runTimeline.js')
      return runTimeline({ ...where, spec: run, ...(offset === undefined ? {} : { offset }), ...(limit === undefined ? {} : { limit }) })
    }) as View<{ run: string; offset?: number | undefined; limit?: number | undefined }>,
  },
  rundiff: {
    description: 'Where run b first diverges from run a, with the JSON diff of that step.',
    input: { a: storedRun, b: storedRun },
    run: (async (where, { a, b }) => {
      const { compareRuns } = await import('../trace/diff/compareRuns.js')
      return compareRuns({ ...where, a, b })
    }) as View<{ a: string; b: string }>,
  },
  explorations: {
    description: 'The recorded explorations (speculate, explore, the patterns), newest first: candidates, status, scores, time, winner.',
    input: { limit: count(1000).optional() },
    run: (async (where, { limit }) => {
      const { listExplorations } = await import('../patterns/explorations.js')
      return { explorations: await listExplorations({ ...where, ...(limit === undefined ? {} : { limit }) }) }
    }) as View<{ limit?: number | undefined }>,
  },
  branches: {
    description:
      'The live branches with the paths each changed so far and the sandboxed commands running in each; the commands running sandboxed in the workspace itself, with its changes since HEAD.',
    input: {},
    run: (async (where) => {
      const { liveWork } = await import('../branch/run/liveChanges.js')
      return liveWork(where)
    }) as View<object>,
  },
} as const

export type ViewName = keyof typeof VIEWS
export const VIEW_NAMES = Object.keys(VIEWS) as ViewName[]

/** Run a view on query parameters not yet checked. @throws {UsageError} parameters the view's schema refuses */
export async function runView(name: ViewName, where: StoreLocator, query: URLSearchParams, ctx: ViewContext): Promise<object> {
  const view = VIEWS[name]
  return (view.run as View<unknown>)(where, checkArgs(name, view.input, Object.fromEntries(query)), ctx)
}
