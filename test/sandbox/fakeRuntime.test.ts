import { existsSync, promises as fs } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { Workspace } from '../../src/index.js'
import { type SandboxRuntime, nativeRuntime, useSandboxRuntime } from '../../src/sandbox/SandboxRuntime.js'
import { type SandboxSpec } from '../../src/sandbox/runSandboxed.js'
import { makeWorkspace } from '../helpers/tmp.js'

/** Branch logic against a fake sandbox runtime: what a run is given and what it reports, no namespaces involved. */
let restore = () => undefined as void
afterEach(() => restore())

it('runs a branch command through the injected runtime: the branch view at the workspace path, the store hidden, changes reported', async () => {
  const specs: SandboxSpec[] = []
  const fake: SandboxRuntime = {
    ...nativeRuntime,
    async run(spec) {
      specs.push(spec)
      await fs.writeFile(join(spec.view, 'made-by-fake.txt'), 'fake') // what the command would have written
      return { exitCode: 3, stdout: 'out', stderr: '', truncated: false, durationMs: 1, timedOut: false, oomKilled: false, limits: {}, warnings: [] }
    },
  }
  restore = useSandboxRuntime(fake)
  const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }), backend: 'copy' })
  await using b = await ws.branch('faked')
  const r = await b.run('anything', { timeout: '5s' })
  expect(r).toMatchObject({ exitCode: 3, stdout: 'out', branch: 'faked', changedPaths: ['made-by-fake.txt'] })
  expect(specs).toHaveLength(1)
  expect(specs[0]).toMatchObject({ cmd: 'anything', workspace: ws.dir, view: b.path, hide: [ws.store.root], timeout: '5s' })
  expect(existsSync(join(ws.dir, 'made-by-fake.txt'))).toBe(false)
})
