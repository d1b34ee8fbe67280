import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { InternalError } from '../errors/index.js'
import type { Worker } from 'node:worker_threads'
import { PACKAGE_ROOT } from './ownPackage.js'
import { requirePackage } from './requirePackage.js'

/**
 * The built JS file of an entry module that a child process or worker thread loads
 * (`trace/register.js`, `world/scan/hashWorker.js`, ...): `dist/<layer>/<name>` of this
 * package, whether the caller runs from dist/ (the library), the bundled CLI or src/ (as
 * tests run).
 */
export function builtEntry(layer: string, name: string): string {
  const entry = join(PACKAGE_ROOT, 'dist', layer, name)
  if (!existsSync(entry)) throw new InternalError(`${layer}/${name} is not built; run 'npm run build' first`)
  return entry
}

/**
 * A worker thread running a built entry (`builtEntry`). Without the parent's node flags:
 * the entry is plain JS, and a loader the parent was started with (tsx, as tests and
 * benchmarks run) would load again in every thread, about 100 ms each here.
 */
export function startBuiltWorker(layer: string, name: string, workerData?: unknown): Worker {
  const { Worker } = requirePackage('node:worker_threads') as typeof import('node:worker_threads')
  return new Worker(builtEntry(layer, name), { workerData, execArgv: [] })
}
