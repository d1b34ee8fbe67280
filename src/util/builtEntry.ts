import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { InternalError } from '../errors/index.js'

/**
 * The built JS file of an entry module that a child process or worker thread loads
 * (`trace/register.js`, `world/hashWorker.js`, ...): in dist/ beside this file's layer
 * when running from dist, else in the package's dist/ (running from source, as tests do).
 */
export function builtEntry(layer: string, name: string): string {
  const here = dirname(fileURLToPath(import.meta.url))
  for (const candidate of [join(here, '..', layer, name), join(here, '..', '..', 'dist', layer, name)]) if (existsSync(candidate)) return candidate
  throw new InternalError(`${name} is not built; run 'npm run build' first`)
}
