import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { RunNotFoundError } from '../errors/index.js'
import { parseRun } from './parseRun.js'
import type { Run } from './Run.js'
import { RunStore } from './RunStore.js'
import { resolveStore, type StoreChoice } from './resolveStore.js'

/** Whether `spec` names an artifact file rather than a stored run id. */
export function isRunFile(spec: string, cwd = process.cwd()): boolean {
  return spec.endsWith('.json') || spec.includes('/') || existsSync(resolve(cwd, spec))
}

/**
 * A run named by a `*.run.json` path or a run id (full, unique prefix, or `latest`) in
 * the store. Artifacts are validated and migrated (RunArtifactError, exit 5, when bad).
 */
export async function loadRun({ spec, ...where }: { spec: string } & StoreChoice): Promise<Run> {
  if (isRunFile(spec, where.cwd)) {
    const path = resolve(where.cwd ?? process.cwd(), spec)
    if (!existsSync(path)) throw new RunNotFoundError(`no run artifact at ${path}`, { path })
    return parseRun(readFileSync(path), path)
  }
  const runs = RunStore.open({ store: await resolveStore(where) })
  try {
    return await runs.get(spec)
  } finally {
    runs.close()
  }
}
