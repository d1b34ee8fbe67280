import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SandboxError } from '../errors/index.js'
import { PREBUILT_DIR } from '../util/prebuilt.js'

let found: string | undefined

/**
 * The sandbox runtime (native/sandbox.c): in the nearest directory above this file (from
 * dist/, the bundled CLI and src/ alike) that has one, `build/forkpoint-sandbox` (built
 * from this copy's sources by `npm run build`, or at install where no prebuilt fits), else
 * the one the package ships prebuilt for this platform.
 * @throws {SandboxError} when neither is there (no prebuilt for this platform, and no C compiler at install)
 */
export function runtimeBinary(): string {
  if (found) return found
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const candidate = [join(dir, 'build', 'forkpoint-sandbox'), join(dir, PREBUILT_DIR, 'forkpoint-sandbox')].find((path) => existsSync(path))
    if (candidate) return (found = candidate)
    if (dirname(dir) === dir)
      throw new SandboxError(
        `the sandbox runtime is not built and none is prebuilt for ${process.platform}-${process.arch}: install a C compiler (cc) and libseccomp-dev, then 'npm rebuild forkpoint'`,
        {},
      )
  }
}
