/**
 * `npm run bench -- install`: what a user's install of the package weighs: `npm pack`, then
 * `npm i` of the tarball into an empty project from the npm registry, with no C compiler on
 * PATH (test/helpers/packedInstall.ts, as test/package/install.test.ts does it). Packages,
 * megabytes of files and of disk under node_modules, the tarball, and the install's time.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { packAndInstall } from '../test/helpers/packedInstall.js'
import { report } from './harness.js'

const MB = 1e6

export async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fp-bench-install-'))
  try {
    const r = await packAndInstall(dir)
    report('install', 'npm i of the packed package into an empty project, no C compiler on PATH', [
      { packages: r.packages, files_mb: r.bytes / MB, disk_mb: r.diskBytes / MB, tarball_mb: r.tarballBytes / MB, install_s: r.installMs / 1000 },
    ])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
