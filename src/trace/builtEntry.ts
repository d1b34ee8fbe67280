import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { InternalError } from '../errors/index.js'

/**
 * The built JS file of a trace entry module (`register.js`, `ingestJournal.js`,
 * `netnsBridge.js`) that child processes load: the sibling of this file when running
 * from dist, else dist/trace/ of the package (running from source, as tests do).
 */
export function builtEntry(name: string): string {
  const here = dirname(fileURLToPath(import.meta.url))
  for (const candidate of [join(here, name), join(here, '..', '..', 'dist', 'trace', name)]) if (existsSync(candidate)) return candidate
  throw new InternalError(`${name} is not built; run 'npm run build' first`)
}
