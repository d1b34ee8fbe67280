import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { SandboxError } from '../errors/index.js'
import { PACKAGE_ROOT } from '../util/ownPackage.js'
import { PREBUILT_DIR } from '../util/prebuilt.js'

let found: string | undefined

/**
 * The sandbox runtime (native/sandbox.c), from this package alone: `build/forkpoint-sandbox`
 * (built from this copy's sources by `npm run build`, or at install where no prebuilt fits),
 * else the one it ships prebuilt for this platform. Never from a directory above the
 * package: root runs it, and another user may write there.
 * @throws {SandboxError} when neither is there (no prebuilt for this platform, and no C compiler at install)
 */
export function runtimeBinary(): string {
  found ??= [join(PACKAGE_ROOT, 'build', 'forkpoint-sandbox'), join(PACKAGE_ROOT, PREBUILT_DIR, 'forkpoint-sandbox')].find((path) => existsSync(path))
  if (found) return found
  throw new SandboxError(
    `the sandbox runtime is not built and none is prebuilt for ${process.platform}-${process.arch}: install a C compiler (cc) and libseccomp-dev, then 'npm rebuild forkpoint'`,
    {},
  )
}
