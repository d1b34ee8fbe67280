import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { OUTPUTS, staleReasons } from '../../scripts/buildIfStale.mjs'
import { tempDir } from '../helpers/tmp.js'

const sources = ['src/index.ts', 'src/ui/main.tsx', 'native/lstat_names.c', 'native/sandbox.c', 'binding.gyp', 'package.json', 'tsconfig.json', 'tsconfig.build.json']
const scripts = ['scripts/bundleCli.mjs', 'scripts/bundleUi.mjs', 'scripts/buildNative.mjs']

/** Write `path` under `root` with its modification time `seconds` after the epoch. */
function writeAt(root: string, path: string, seconds: number): void {
  mkdirSync(dirname(join(root, path)), { recursive: true })
  writeFileSync(join(root, path), path)
  utimesSync(join(root, path), seconds, seconds)
}

/** A checkout whose sources are from second 1000 and whose build from second 2000. */
function builtCheckout(): string {
  const root = tempDir('build-if-stale')
  for (const path of [...sources, ...scripts]) writeAt(root, path, 1000)
  for (const output of Object.keys(OUTPUTS)) writeAt(root, output, 2000)
  for (const dir of ['src/ui', 'src', 'native', 'scripts']) utimesSync(join(root, dir), 1000, 1000)
  return root
}

describe('npm test builds only when the build is stale', () => {
  it('is up to date when every output is newer than its sources', () => {
    expect(staleReasons(builtCheckout())).toEqual([])
  })

  it('is stale after an edit in src/: the compiled and bundled outputs name the file', () => {
    const root = builtCheckout()
    writeAt(root, 'src/index.ts', 3000)
    expect(staleReasons(root)).toEqual([`dist/index.js is older than ${join(root, 'src/index.ts')}`, `dist/cli/main.cjs is older than ${join(root, 'src/index.ts')}`])
  })

  it('is stale after a new file in src/ (its directory changes) or an edit deep in src/ui/', () => {
    const root = builtCheckout()
    writeAt(root, 'src/ui/deep/view.tsx', 3000)
    expect(staleReasons(root)).toHaveLength(3)
  })

  it('is stale after an edit of native C code, a build script or the TypeScript config', () => {
    for (const [path, stale] of [
      ['native/lstat_names.c', ['build/Release/forkpoint_native.node', 'build/forkpoint-sandbox']],
      ['native/sandbox.c', ['build/forkpoint-sandbox']],
      ['scripts/bundleUi.mjs', ['dist/ui/app.js']],
      ['tsconfig.json', ['dist/index.js', 'dist/cli/main.cjs', 'dist/ui/app.js']],
    ] as const) {
      const root = builtCheckout()
      writeAt(root, path, 3000)
      expect(
        staleReasons(root).map((reason) => reason.split(' ')[0]),
        path,
      ).toEqual(stale)
    }
  })

  it('is stale when an output is missing, as in a fresh clone', () => {
    const root = builtCheckout()
    rmSync(join(root, 'build/forkpoint-sandbox'))
    expect(staleReasons(root)).toEqual(['build/forkpoint-sandbox is missing'])
  })
})
