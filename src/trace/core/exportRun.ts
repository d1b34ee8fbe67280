import { resolve } from 'node:path'
import { loadRun } from './loadRun.js'
import type { StoreLocator } from '../../store/findStore.js'
import { writeRunArtifact } from './runArtifact.js'

/** Write a stored run as a portable `*.run.json` artifact. */
export async function exportRun({ spec, out, ...where }: { spec: string; out: string } & StoreLocator): Promise<{ artifact: string; runId: string; steps: number }> {
  const run = await loadRun({ ...where, spec })
  const artifact = resolve(where.dir ?? process.cwd(), out)
  await writeRunArtifact(artifact, run)
  return { artifact, runId: run.runId, steps: run.steps.length }
}
