import { chownSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { type Runner, forkpoint } from '../branch/toolsInBranch.js'
import { makeWorkspace } from '../helpers/tmp.js'

/** A shell that holds 200 MB in one string: past a 64M limit whatever enforces it. */
const HOG = ['sh', '-c', 'x=$(head -c 200000000 /dev/zero | tr "\\0" a); echo survived']

const runners: Runner[] = process.getuid?.() === 0 ? [{ user: 'root' }, { user: 'nobody' }] : [{ user: 'root' }]

async function ownWorkspace(runner: Runner): Promise<string> {
  const dir = await makeWorkspace({ 'a.txt': 'a' })
  if (runner.user === 'nobody') chownSync(dir, 65534, 65534)
  return dir
}

describe('a command killed for memory says so', () => {
  for (const runner of runners) {
    it(`as ${runner.user}: under a memory cgroup, oomKilled and "killed: memory limit 64M reached"; under RLIMIT_AS, neither is claimed`, async () => {
      const dir = await ownWorkspace(runner)
      const human = forkpoint(runner, dir, 'run', '--memory', '64M', '--', ...HOG)
      const json = forkpoint(runner, dir, 'run', '--memory', '64M', '--json', '--', ...HOG)
      const result = JSON.parse(json.stdout) as { exitCode: number; oomKilled: boolean; limits: { memory: string } }
      expect(human.stdout).not.toContain('survived')
      if (result.limits.memory === 'cgroup') {
        expect([human.status, result.exitCode, result.oomKilled]).toEqual([137, 137, true])
        expect(human.stderr).toContain('forkpoint: killed: memory limit 64M reached')
        expect(json.stderr).toContain('forkpoint: killed: memory limit 64M reached')
      } else {
        expect(result.oomKilled).toBe(false)
        expect(human.stderr).not.toContain('killed: memory limit')
        expect(human.stderr).toMatch(/warning: memory 64M is only a per-process address-space limit/)
      }
    })
  }

  it('as root, where a memory cgroup is ours: a SIGKILL that is not the OOM killer is not called one', async () => {
    const dir = await ownWorkspace({ user: 'root' })
    const ran = forkpoint({ user: 'root' }, dir, 'run', '--memory', '64M', '--json', '--', 'sh', '-c', 'kill -9 $$')
    expect(ran.status).toBe(137)
    expect(JSON.parse(ran.stdout)).toMatchObject({ exitCode: 137, oomKilled: false })
    expect(ran.stderr).not.toContain('killed: memory limit')
  })
})

describe('the library result of an out-of-memory kill', () => {
  it('Workspace.run says oomKilled where the limit is a memory cgroup, and not otherwise', async () => {
    const { Workspace } = await import('../../src/index.js')
    await using ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }) })
    const hog = await ws.run(HOG, { memory: '64M' })
    expect(hog.stdout).not.toContain('survived')
    expect(hog.oomKilled).toBe(hog.limits.memory === 'cgroup')
    if (process.getuid?.() === 0) expect(hog.limits.memory).toBe('cgroup') // root on this host: a writable memory hierarchy
    expect((await ws.run('true', { memory: '64M' })).oomKilled).toBe(false)
  })
})
