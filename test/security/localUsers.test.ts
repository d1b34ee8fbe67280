import { type ChildProcess, spawn } from 'node:child_process'
import { promises as fs, chownSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, afterAll } from 'vitest'
import { Workspace } from '../../src/index.js'
import { type Runner, forkpoint, runAs, toolWorkspace } from '../branch/toolsInBranch.js'
import { fp, fpJson, CLI } from '../helpers/cli.js'
import { PLANT, euidAsNobody, openToOthers } from '../helpers/privilegedModes.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'

/** Root's sandboxed work hands `nobody` nothing that runs as root: the case needs a root caller, so it runs as root only. */
describe.runIf(process.getuid?.() === 0)("a root caller's sandboxed work is no other user's root", () => {
  /** A workspace with its store that nobody may reach into. */
  const workspace = async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a\n' })
    openToOthers(dir)
    expect((await fp(dir, 'init')).code).toBe(0)
    return dir
  }

  it('a setuid copy of id made by forkpoint run gives nobody no euid 0', async () => {
    const dir = await workspace()
    expect((await fp(dir, 'run', '--', 'sh', '-c', PLANT)).code).toBe(0)
    expect([euidAsNobody(join(dir, 's')), euidAsNobody(join(dir, 'g'))]).toEqual(['65534', '65534'])
  })

  it("a branch's host mount is nosuid: even a setuid root file put there from the host gives nobody no euid 0; nor does its commit", async () => {
    const dir = await workspace()
    const branch = await fpJson<{ path: string; view: string }>(dir, 'branch', 'attempt')
    expect(branch.json.view).toBe('host')
    openToOthers(join(branch.json.path, '..'))
    expect((await fp(dir, 'run', '--branch', 'attempt', '--', 'sh', '-c', PLANT)).code).toBe(0)
    await fs.copyFile('/usr/bin/id', join(branch.json.path, 'host-made'))
    await fs.chmod(join(branch.json.path, 'host-made'), 0o4755)
    expect(['s', 'host-made'].map((f) => euidAsNobody(join(branch.json.path, f)))).toEqual(['65534', '65534'])
    expect((await fp(dir, 'commit', 'attempt')).code).toBe(0)
    expect(['s', 'g', 'host-made'].map((f) => euidAsNobody(join(dir, f)))).toEqual(['65534', '65534', '65534'])
  })

  it('a branch run through the library leaves nothing setuid in its view either', async () => {
    await using ws = await Workspace.open({ dir: await workspace() })
    const branch = await ws.branch('attempt')
    expect((await branch.run(PLANT)).exitCode).toBe(0)
    await branch.commit()
    expect(euidAsNobody(join(ws.dir, 's'))).toBe('65534')
  })
})

describe('store state and ownership: a planted store mounts, removes and kills nothing', () => {
  const ROOT: Runner = { user: 'root' }
  const NOBODY: Runner = { user: 'nobody' }
  const PLANTED_ID = 'mplanted0-00112233aa'
  const BASE_TREE = `sha256:${'ab'.repeat(32)}`
  const victims: ChildProcess[] = []
  afterAll(() => victims.forEach((v) => v.kill('SIGKILL')))

  /** A process's start time (field 22 of its stat), or null when it is gone: forkpoint's own way to tell one process from the next. */
  const startOf = (pid: number): string | null => {
    if (!existsSync(`/proc/${pid}/stat`)) return null
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null
  }
  const mountPoints = (): string[] =>
    readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[4] ?? '')
  const mountedUnder = (dir: string): string[] => mountPoints().filter((p) => p === dir || p.startsWith(`${dir}/`))

  /** A directory outside the workspace with one file in it, owned by the runner: what an attacker would mount over. */
  function target(runner: Runner, label: string): string {
    const dir = tempDir(label)
    writeFileSync(join(dir, 'keep'), 'the owner’s file\n')
    if (runner.user === 'nobody') for (const p of [dir, join(dir, 'keep')]) chownSync(p, 65534, 65534)
    return dir
  }

  /** A branch state written by someone else into the workspace's store (a cloned repository, a sandboxed command). */
  function plant(runner: Runner, workspace: string, fields: Record<string, unknown>): void {
    const dir = join(workspace, '.forkpoint', 'branches', 'live', PLANTED_ID)
    for (const sub of ['', 'upper', 'work', 'mnt']) mkdirSync(join(dir, sub), { recursive: true })
    mkdirSync(join(workspace, '.forkpoint', 'branches', 'bases', BASE_TREE.slice('sha256:'.length)), { recursive: true })
    const state = {
      kind: 'branch-state',
      schemaVersion: 1,
      id: PLANTED_ID,
      name: 'planted',
      parent: null,
      backend: 'overlay',
      baseTree: BASE_TREE,
      parentGeneration: 0,
      owner: null,
      holder: null,
      createdAt: new Date().toISOString(),
      ...fields,
    }
    writeFileSync(join(dir, 'state.json'), JSON.stringify(state))
    if (runner.user === 'nobody') runAs(ROOT, workspace, ['chown', '-R', 'nobody:nogroup', join(workspace, '.forkpoint')])
  }

  for (const runner of [ROOT, NOBODY]) {
    it(`as ${runner.user}: branch --list, abort and commit refuse a state naming layers and a host path (exit 5), and nothing is mounted on or removed from the path`, async () => {
      const workspace = await toolWorkspace(runner)
      const evil = target(runner, 'attacker-layer')
      writeFileSync(join(evil, 'payload'), '* * * * * root id > /tmp/pwned\n')
      const victim = target(runner, 'victim-dir')
      plant(runner, workspace, { layers: [evil], hostView: { via: runner.user === 'root' ? 'kernel' : 'fuse', path: victim } })
      for (const args of [
        ['branch', '--list'],
        ['abort', 'planted'],
        ['commit', 'planted'],
      ]) {
        const ran = forkpoint(runner, workspace, ...args)
        expect([args, ran.status, ran.stderr]).toEqual([args, 5, expect.stringMatching(/refusing the state of branch .*names the path/)])
        expect(mountedUnder(victim)).toEqual([])
        expect(readdirSync(victim)).toEqual(['keep'])
        expect(readdirSync(evil).sort()).toEqual(['keep', 'payload'])
      }
    })
  }

  it('as root: a state whose layers are not the branch’s own is refused (exit 5), even without a host path', async () => {
    const workspace = await toolWorkspace(ROOT)
    const evil = target(ROOT, 'attacker-layer')
    plant(ROOT, workspace, { layers: [evil] })
    const ran = forkpoint(ROOT, workspace, 'branch', '--list')
    expect([ran.status, ran.stderr]).toEqual([5, expect.stringMatching(/layers .* are not the branch’s own|layers .* are not the branch's own/)])
    expect(mountedUnder(evil)).toEqual([])
  })

  it('as root: abort of a state naming another process as its holder does not kill that process', async () => {
    const workspace = await toolWorkspace(ROOT)
    const victim = spawn('sleep', ['1000'], { stdio: 'ignore' })
    victims.push(victim)
    const start = startOf(victim.pid!)
    plant(ROOT, workspace, { holder: { pid: victim.pid, start } })
    const ran = forkpoint(ROOT, workspace, 'abort', 'planted')
    expect([ran.status, ran.stderr]).toEqual([0, ''])
    expect(startOf(victim.pid!)).toBe(start)
    expect(existsSync(join(workspace, '.forkpoint', 'branches', 'live', PLANTED_ID))).toBe(false)
  })

  it.runIf(process.getuid?.() === 0)(
    'as root: a store another user owns is refused (exit 2, with the way to allow it); allowed by FORKPOINT_SAFE_DIRECTORY, it works',
    async () => {
      const workspace = await toolWorkspace(NOBODY)
      const store = join(workspace, '.forkpoint')
      for (const args of [['status'], ['branch', '--list'], ['log']]) {
        const refused = runAs(ROOT, workspace, [CLI, ...args])
        expect([args, refused.status, refused.stderr]).toEqual([args, 2, expect.stringContaining(`refusing the store ${store}: it belongs to uid 65534`)])
        expect(refused.stderr).toContain(`FORKPOINT_SAFE_DIRECTORY=${store}`)
      }
      expect(runAs(ROOT, workspace, [CLI, 'status'], { FORKPOINT_SAFE_DIRECTORY: `/elsewhere:${store}` }).status).toBe(0)
      expect(runAs(ROOT, workspace, [CLI, 'branch', '--list'], { FORKPOINT_SAFE_DIRECTORY: '*' }).status).toBe(0)
      expect(runAs(NOBODY, workspace, [CLI, 'status']).status).toBe(0) // its owner uses it as ever
    },
  )
})
