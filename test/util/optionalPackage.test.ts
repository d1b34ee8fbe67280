import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { ExitCode, MissingPackageError } from '../../src/index.js'
import { ROOT, runNode } from '../helpers/cli.js'
import { loadOptional, requireOptional } from '../../src/util/optionalPackage.js'
import { tempDir } from '../helpers/tmp.js'

/** A module outside this project, where none of its node_modules can be found: as a project that has not installed the package. */
function moduleOutside(name: string, source: string): string {
  const path = join(tempDir('no-package'), name)
  writeFileSync(path, source)
  return path
}

describe('optional packages', () => {
  it('an import of a missing one is a MissingPackageError naming the npm i that adds the whole feature', async () => {
    const uses = moduleOutside('uses.mjs', "export { Queue } from 'bullmq'\n")
    // Node's own import (vitest would resolve the package from this project): the error as the CLI prints it
    const script = `import { loadOptional } from ${JSON.stringify(join(ROOT, 'src/util/optionalPackage.ts'))}
      await loadOptional('queue', () => import(process.argv[1])).catch((err) => console.log(JSON.stringify({ ...err.toJSON(), is: err.constructor.name })))`
    const r = await runNode(['--import', 'tsx', '--input-type=module', '-e', script, pathToFileURL(uses).href], { cwd: ROOT })
    expect(r.stderr).toBe('')
    expect(JSON.parse(r.stdout)).toEqual({
      is: 'MissingPackageError',
      error: {
        code: 'MissingPackageError',
        exitCode: ExitCode.usage,
        message:
          "the queue fan-out (--queue, forkpoint worker) needs bullmq@^6.5.1 and ioredis@^6.0.0, which this project has not installed: npm i 'bullmq@^6.5.1' 'ioredis@^6.0.0'",
        data: { feature: 'the queue fan-out (--queue, forkpoint worker)', packages: ['bullmq@^6.5.1', 'ioredis@^6.0.0'], install: "npm i 'bullmq@^6.5.1' 'ioredis@^6.0.0'" },
      },
    })
  })

  it('a require of a missing one is one too', () => {
    const uses = moduleOutside('uses.cjs', "module.exports = require('@parcel/watcher')\n")
    expect(() => requireOptional('watcher', uses)).toThrow(MissingPackageError)
    expect(() => requireOptional('watcher', uses)).toThrow("npm i '@parcel/watcher@^2.6.0'")
  })

  it("another package missing, or another failure, is not the feature's: it goes through as it is", async () => {
    const other = moduleOutside('other.cjs', "module.exports = require('left-pad-not-installed')\n")
    expect(() => requireOptional('watcher', other)).toThrow(expect.objectContaining({ code: 'MODULE_NOT_FOUND' }))
    const broken = new TypeError('broken')
    await expect(loadOptional('mcp', () => Promise.reject(broken))).rejects.toBe(broken)
  })

  it('an installed one loads', async () => {
    const { Queue } = await loadOptional('queue', () => import('bullmq'))
    expect(typeof Queue).toBe('function')
  })
})
