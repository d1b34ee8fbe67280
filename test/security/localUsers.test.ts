import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Workspace } from '../../src/index.js'
import { fp, fpJson } from '../helpers/cli.js'
import { PLANT, euidAsNobody, openToOthers } from '../helpers/privilegedModes.js'
import { makeWorkspace } from '../helpers/tmp.js'

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
