import { UsageError } from '../errors/index.js'
import type { StoreLocator } from '../store/findStore.js'
import type { ConfineFile } from '../trace/core/loadRun.js'
import type { RunDiff } from '../trace/diff/diffRuns.js'
import type { SnapshotDiff } from '../world/diff/diffSnapshots.js'

/** Snapshots compared file by file (with their patch when asked), or runs to their first divergence. */
export type DiffOutput = SnapshotDiff | (SnapshotDiff & { patch: string; patchTruncated: boolean }) | { trace: RunDiff }

/**
 * What `diff A [B]` compares: run ids and `*.run.json` files as runs (B default: the run A
 * was forked or replayed from), anything else as snapshots (B default: the workspace), with their unified diff under `patch`.
 * @throws {UsageError} `patch` asked of runs
 */
export async function diffImagesOrRuns({
  a,
  b,
  window,
  patch,
  confine,
  env,
  ...where
}: StoreLocator & {
  a: string
  b?: string | undefined
  window?: number | undefined
  patch?: boolean
  confine?: ConfineFile | undefined
  env: NodeJS.ProcessEnv
}): Promise<DiffOutput> {
  const { isRunSpec, compareRuns } = await import('../trace/diff/compareRuns.js')
  if (isRunSpec(a) && (b === undefined || isRunSpec(b))) {
    if (patch) throw new UsageError('a patch shows the files of snapshots; runs diff step by step without it')
    return { trace: await compareRuns({ ...where, a, b, confine, env, ...(window === undefined ? {} : { window }) }) }
  }
  if (patch) {
    const { diffWithPatch } = await import('../world/diff/patchSnapshots.js')
    return diffWithPatch({ ...where, a, b })
  }
  const { diffSnapshots } = await import('../world/diff/diffSnapshots.js')
  return diffSnapshots({ ...where, a, b })
}
