import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { hostMountVia } from '../../src/branch/mount/hostMount.js'
import { Workspace, bestOfN } from '../../src/index.js'
import type { CommandValue, Outcome } from '../../src/index.js'
import { type Runner, forkpoint, fuseNamespace, runAs } from '../branch/toolsInBranch.js'
import { LIB, fp } from '../helpers/cli.js'
import { giveToNobody } from '../helpers/privilegedModes.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'
import { expectNothingLeftIn } from './leftovers.js'

/**
 * Unsandboxed candidates (`--no-isolate`, `isolate: false`) run Node scripts: each runs in a
 * real directory of the host holding its branch's files, so relative imports, `getcwd()`
 * and `process.cwd()` work, and the winner's changes commit. As root (kernel overlayfs on
 * the host), and as `nobody`: with FUSE usable (fuse-overlayfs), and without (the copy backend).
 */
const root = process.getuid?.() === 0
/** What this process's unsandboxed candidates get: an overlay mounted on the host where it can mount there, else a copy. */
const ownKind = hostMountVia() === null ? 'root' : 'mnt'

/** A workspace whose `main.mjs` imports `./lib.mjs`, writes out.txt and prints its cwd and what it sees there. */
async function nodeWorkspace(): Promise<string> {
  return makeWorkspace({
    'lib.mjs': "export const greeting = 'hello'\n",
    'main.mjs': [
      "import { readdirSync, writeFileSync } from 'node:fs'",
      "import { greeting } from './lib.mjs'",
      "writeFileSync('out.txt', `${greeting} from attempt ${process.env.FORKPOINT_ATTEMPT}\\n`)",
      "console.log(JSON.stringify({ cwd: process.cwd(), files: readdirSync('.').sort() }))",
      '',
    ].join('\n'),
  })
}

/**
 * The winner ran in its branch's own directory, a real one (not `/proc/<pid>/root/...`)
 * holding the branch's files, as a directory of `kind` (`mnt`: an overlay mounted on the
 * host; `root`: a copy), and its out.txt is in the workspace. Nothing is left live.
 */
function expectRanInTheBranch(dir: string, outcome: Outcome<CommandValue>, kind: 'mnt' | 'root'): void {
  const winner = outcome.results[outcome.winner ?? -1]
  expect([outcome.committed, winner?.value?.stderr]).toEqual([true, ''])
  const seen = JSON.parse(winner!.value!.stdout) as { cwd: string; files: string[] }
  expect(seen.cwd).toBe(winner!.branchPath)
  expect(seen.cwd).toMatch(new RegExp(`^${dir}/\\.forkpoint/branches/live/[^/]+/${kind}$`))
  expect(seen.files).toEqual(['lib.mjs', 'main.mjs', 'out.txt'])
  expect(readFileSync(join(dir, 'out.txt'), 'utf8')).toBe(`hello from attempt ${winner!.index}\n`)
  expectNothingLeftIn(dir)
}

const SPECULATE = ['speculate', '--no-isolate', '-c', 'node main.mjs', '-c', 'node main.mjs', '--json']

describe('unsandboxed candidates run Node scripts in a directory of the host', () => {
  it('forkpoint speculate --no-isolate', async () => {
    const dir = await nodeWorkspace()
    expect((await fp(dir, 'init')).code).toBe(0)
    const r = await fp(dir, ...SPECULATE)
    expect([r.code, r.stderr]).toEqual([0, ''])
    expectRanInTheBranch(dir, JSON.parse(r.stdout) as Outcome<CommandValue>, ownKind)
  })

  it('bestOfN(..., { isolate: false })', async () => {
    const dir = await nodeWorkspace()
    const ws = await Workspace.open({ dir })
    const outcome = await bestOfN<CommandValue>({ cmd: 'node main.mjs' }, { n: 2, isolate: false }).apply(ws)
    expectRanInTheBranch(dir, outcome, ownKind)
  })
})

describe.runIf(root)('unsandboxed candidates run Node scripts in a directory of the host (nobody)', () => {
  let stop: (() => void) | undefined
  afterEach(() => stop?.())

  /** A workspace of nobody's, with its store. */
  async function nobodysWorkspace(runner: Runner): Promise<string> {
    const dir = await nodeWorkspace()
    giveToNobody(dir)
    expect(forkpoint(runner, dir, 'init').status).toBe(0)
    return dir
  }

  it('forkpoint speculate --no-isolate, no FUSE: copy branches', async () => {
    const nobody: Runner = { user: 'nobody' }
    const dir = await nobodysWorkspace(nobody)
    const r = forkpoint(nobody, dir, ...SPECULATE)
    expect([r.status, r.stderr]).toEqual([0, ''])
    expectRanInTheBranch(dir, JSON.parse(r.stdout) as Outcome<CommandValue>, 'root')
  })

  it('forkpoint speculate --no-isolate, with a /dev/fuse it may open: fuse-overlayfs on the host', async () => {
    const ns = await fuseNamespace('666')
    stop = () => ns.kill()
    const nobody: Runner = { user: 'nobody', namespaceOf: ns.pid }
    const dir = await nobodysWorkspace(nobody)
    const r = forkpoint(nobody, dir, ...SPECULATE)
    expect([r.status, r.stderr]).toEqual([0, ''])
    expectRanInTheBranch(dir, JSON.parse(r.stdout) as Outcome<CommandValue>, 'mnt')
  })

  it('bestOfN(..., { isolate: false }), no FUSE: copy branches', async () => {
    const nobody: Runner = { user: 'nobody' }
    const dir = await nobodysWorkspace(nobody)
    const driver = join(tempDir('plain-driver'), 'driver.mjs')
    writeFileSync(
      driver,
      [
        `import { Workspace, bestOfN } from ${JSON.stringify(LIB)}`,
        'const ws = await Workspace.open({ dir: process.argv[2] })',
        "const outcome = await bestOfN({ cmd: 'node main.mjs' }, { n: 2, isolate: false }).apply(ws)",
        'console.log(JSON.stringify(outcome))',
        '',
      ].join('\n'),
    )
    giveToNobody(join(driver, '..'))
    const r = runAs(nobody, dir, [process.execPath, driver, dir])
    expect([r.status, r.stderr]).toEqual([0, ''])
    expectRanInTheBranch(dir, JSON.parse(r.stdout) as Outcome<CommandValue>, 'root')
  })
})
