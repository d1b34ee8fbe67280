import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SandboxError } from '../errors/index.js'

let found: string | undefined

/**
 * The sandbox runtime (native/sandbox.c, built by `npm run build` and at install into
 * `build/forkpoint-sandbox`): the nearest `build/forkpoint-sandbox` above this file, from
 * dist/, the bundled CLI and src/ alike.
 * @throws {SandboxError} when it was not built (no C compiler at install)
 */
export function runtimeBinary(): string {
  if (found) return found
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const candidate = join(dir, 'build', 'forkpoint-sandbox')
    if (existsSync(candidate)) return (found = candidate)
    if (dirname(dir) === dir) throw new SandboxError("the sandbox runtime (build/forkpoint-sandbox) is not built: install a C compiler (cc) and run 'npm run build'", {})
  }
}
