import { resolve } from 'node:path'
import { atomicWrite } from '../util/atomicWrite.js'
import { loadRun } from './loadRun.js'
import type { StoreChoice } from './resolveStore.js'
import { runArtifactText } from './runArtifact.js'

/** Write a stored run as a portable `*.run.json` artifact. */
export async function exportRun({ spec, out, ...where }: { spec: string; out: string } & StoreChoice): Promise<{ artifact: string; runId: string; steps: number }> {
  const run = await loadRun({ ...where, spec })
  const artifact = resolve(where.cwd ?? process.cwd(), out)
  await atomicWrite(artifact, runArtifactText(run))
  return { artifact, runId: run.runId, steps: run.steps.length }
}
