import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { InternalError } from '../errors/index.js'

/**
 * The built JS file of an entry module that a child process or worker thread loads
 * (`trace/register.js`, `world/hashWorker.js`, ...): the nearest `<layer>/<name>` or
 * `dist/<layer>/<name>` above this file, which finds it from dist/ (the library), from the
 * bundled CLI (dist/cli/) and from source (src/, as tests run).
 */
export function builtEntry(layer: string, name: string): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    for (const candidate of [join(dir, layer, name), join(dir, 'dist', layer, name)]) if (existsSync(candidate)) return candidate
    if (dirname(dir) === dir) throw new InternalError(`${layer}/${name} is not built; run 'npm run build' first`)
  }
}
