import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { InternalError } from '../errors/index.js'
import { PACKAGE_ROOT } from './ownPackage.js'

/**
 * The built JS file of an entry module that a child process or worker thread loads
 * (`trace/register.js`, `world/hashWorker.js`, ...): `dist/<layer>/<name>` of this
 * package, whether the caller runs from dist/ (the library), the bundled CLI or src/ (as
 * tests run).
 */
export function builtEntry(layer: string, name: string): string {
  const entry = join(PACKAGE_ROOT, 'dist', layer, name)
  if (!existsSync(entry)) throw new InternalError(`${layer}/${name} is not built; run 'npm run build' first`)
  return entry
}
