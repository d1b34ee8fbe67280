import { resolve } from 'node:path'
import { loadRun } from '../core/loadRun.js'
import { normalizeRun } from './normalizeRun.js'
import type { StoreLocator } from '../../store/findStore.js'
import { writeRunArtifact } from '../core/runArtifact.js'

/** Write the normalised artifact of a run (an artifact or an id) to `out` (or over the input artifact); the hashes of a hand-edited artifact are rewritten. */
export async function ciNormalize({ input, out, ...where }: { input: string; out?: string } & StoreLocator): Promise<{ artifact: string; runId: string; steps: number }> {
  const run = normalizeRun(await loadRun({ ...where, spec: input, rehash: true }))
  const artifact = resolve(where.dir ?? process.cwd(), out ?? input)
  await writeRunArtifact(artifact, run)
  return { artifact, runId: run.runId, steps: run.steps.length }
}
