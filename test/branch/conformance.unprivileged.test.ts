import { spawnSync } from 'node:child_process'
import { chownSync, mkdtempSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { reflinkDir } from '../helpers/reflinkDir.js'
import { tempDir } from '../helpers/tmp.js'

/**
 * Most users are not root. As root (CI), run the branch conformance suite, the recovery
 * tests and the sandbox isolation tests again as `nobody` through setpriv: overlays then go
 * through a user + mount namespace holder, and every case must pass there too, none skipped. Run as a
 * non-root user, the other files already are that run.
 */
const root = process.getuid?.() === 0
let xfs: ReturnType<typeof reflinkDir> | undefined
beforeAll(() => {
  if (root) xfs = reflinkDir()
})
afterAll(() => xfs?.cleanup())

it('passes the conformance suite and the isolation tests as an unprivileged user', () => {
  if (!root) {
    expect(process.getuid?.()).not.toBe(0) // this very run is the unprivileged one
    return
  }
  const nobodyDir = mkdtempSync(join(xfs!.dir, 'nobody-'))
  chownSync(nobodyDir, 65534, 65534)
  const report = join(tempDir('fp-unpriv'), 'report.json')
  chownSync(join(report, '..'), 65534, 65534)
  const files = [
    'test/branch/conformance.test.ts',
    'test/branch/recovery.test.ts',
    'test/sandbox/isolation.test.ts',
    'test/sandbox/security.test.ts',
    'test/sandbox/replayIsolation.test.ts',
    'test/image/forkMaterialize.test.ts',
  ]
  const run = spawnSync(
    'setpriv',
    [
      '--reuid=nobody',
      '--regid=nogroup',
      '--clear-groups',
      'env',
      'HOME=/tmp',
      `FORKPOINT_REFLINK_DIR=${nobodyDir}`,
      'npx',
      'vitest',
      'run',
      '--configLoader',
      'runner',
      '--reporter=json',
      `--outputFile=${report}`,
      ...files,
    ],
    { cwd: join(import.meta.dirname, '../..'), encoding: 'utf8', timeout: 280_000 },
  )
  const result = JSON.parse(readFileSync(report, 'utf8')) as {
    numPassedTests: number
    numFailedTests: number
    numPendingTests: number
    numTodoTests: number
    testResults: Array<{ assertionResults: Array<{ fullName: string; status: string; failureMessages: string[] }> }>
  }
  const failures = result.testResults.flatMap((f) =>
    f.assertionResults.filter((a) => a.status !== 'passed').map((a) => `${a.fullName}: ${a.failureMessages.join('\n').slice(0, 400)}`),
  )
  expect(failures).toEqual([])
  expect(result.numFailedTests + result.numPendingTests + result.numTodoTests).toBe(0)
  expect(result.numPassedTests).toBeGreaterThanOrEqual(50)
  expect(run.status).toBe(0)
}, 300_000)
