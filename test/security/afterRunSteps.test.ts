import { spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, promises as fs, lstatSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { normaliseWritten } from '../../src/branch/commit/normaliseWritten.js'
import { removeMadeGitPaths } from '../../src/branch/run/guardGit.js'
import { removeBeyond } from '../../src/branch/run/removeBeyond.js'
import { removeTree } from '../../src/branch/lifecycle/removeTree.js'
import { PinnedDirs } from '../../src/util/pinnedDirs.js'
import { heldBackWith } from '../../src/world/checkout/heldBackGitPath.js'
import { LIB } from '../helpers/cli.js'
import { giveToNobody } from '../helpers/privilegedModes.js'
import { tempDir } from '../helpers/tmp.js'

/**
 * Two sandboxed runs in one view at once: while the first one's files are made plain after it
 * ends, the second (still running, as the same mapped root) can swap a directory on the way
 * for a symlink to anywhere on the host. Each case below is that swap already made, between
 * the first run's walk and what it does next: nothing it does may land outside the view.
 */
describe('what a run does after it ends stays in its view while another run swaps in symlinks', () => {
  const root = process.getuid?.() === 0

  /** A view whose `d` is a symlink to `outside`, a directory of the host's. */
  const swapped = () => {
    const view = tempDir('view')
    const outside = tempDir('outside')
    symlinkSync(outside, join(view, 'd'))
    return { view, outside }
  }

  it.runIf(root)('normalisation neither chowns nor chmods a host file reached through a swapped directory', async () => {
    const { view, outside } = swapped()
    // another user's setuid program, as a run's written `d/x` would reach it
    writeFileSync(join(outside, 'x'), '#!/bin/sh\n')
    chownSync(join(outside, 'x'), 1000, 1000)
    await fs.chmod(join(outside, 'x'), 0o4755)
    const warnings = await normaliseWritten({ view, paths: ['d', 'd/x'], before: new Map() })
    expect(warnings).toEqual([])
    const st = lstatSync(join(outside, 'x'))
    expect([st.uid, st.gid, (st.mode & 0o7777).toString(8)]).toEqual([1000, 1000, '4755'])
  })

  it('normalisation still makes plain what it reaches through directories', async () => {
    const view = tempDir('view')
    mkdirSync(join(view, 'd'))
    writeFileSync(join(view, 'd/x'), 'x')
    await fs.chmod(join(view, 'd/x'), 0o1755)
    const warnings = await normaliseWritten({ view, paths: ['d/x'], before: new Map() })
    expect(warnings).toEqual(['cleared the setuid, setgid or sticky bit of d/x'])
    expect(lstatSync(join(view, 'd/x')).mode & 0o7777).toBe(0o755)
  })

  it('removal beyond reach does not remove a host directory reached through a swapped directory', async () => {
    const { view, outside } = swapped()
    mkdirSync(join(outside, 'deep'))
    writeFileSync(join(outside, 'deep/kept'), 'kept')
    expect(await removeBeyond(view, ['d/deep'])).toEqual([])
    expect(existsSync(join(outside, 'deep/kept'))).toBe(true)
  })

  it("removal of made git paths does not remove a host repository's config reached through a swapped directory", async () => {
    const { view, outside } = swapped()
    mkdirSync(join(outside, '.git'))
    writeFileSync(join(outside, '.git/config'), '[core]\n')
    const signature = `${0o100644}:1:7:0:0:0:0:0`
    const warnings = await removeMadeGitPaths({
      workspace: view,
      changed: ['d/.git/config'],
      before: new Map(),
      after: new Map([['d/.git/config', signature]]),
      held: heldBackWith([]),
    })
    expect(warnings).toEqual([])
    expect(existsSync(join(outside, '.git/config'))).toBe(true)
  })

  it.runIf(root)('normalisation goes on past a path it cannot reach: a FIFO after it is still removed (as nobody)', () => {
    const view = tempDir('view')
    mkdirSync(join(view, 'a'))
    writeFileSync(join(view, 'a/x'), 'x')
    mkdirSync(join(view, 'b'))
    spawnSync('mkfifo', [join(view, 'b/fifo')])
    giveToNobody(view)
    // nobody cannot search `a`: its path fails; the FIFO after it must go all the same
    chmodSync(join(view, 'a'), 0)
    const script = `import { normaliseWritten } from ${JSON.stringify(join(dirname(LIB), 'branch/commit/normaliseWritten.js'))}
      await normaliseWritten({ view: ${JSON.stringify(view)}, paths: ['a/x', 'b/fifo'], before: new Map() }).then(() => console.log('passed'), (err) => console.log(err.code))`
    const ran = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, '--input-type=module', '-e', script], { encoding: 'utf8' })
    expect(ran.stdout.trim()).toBe('EACCES')
    expect(existsSync(join(view, 'b/fifo'))).toBe(false)
  })

  it('reaches directories a name at a time: none through a symlink, any depth past PATH_MAX', async () => {
    const { view } = swapped()
    const deep = Array.from({ length: 20 }, () => 'y'.repeat(250)).join('/')
    await fs.mkdir(join(view, 'e'))
    const dirs = await PinnedDirs.open(view)
    try {
      expect(await dirs.dir('d')).toBeNull()
      expect(await dirs.parentOf('d/x')).toBeNull()
      // made a directory at a time, as a command makes one: no single path reaches the bottom
      let rel = 'e'
      for (const name of deep.split('/')) {
        const dir = await dirs.dir(rel)
        await fs.mkdir(Buffer.from(`/proc/self/fd/${dir!.fd}/${name}`))
        rel = `${rel}/${name}`
      }
      expect((await dirs.dir(`e/${deep}`))?.fd).toBeGreaterThan(0)
      expect(await dirs.dir('e/missing')).toBeNull()
      // never above the root, whatever a path holds
      await expect(dirs.dir('e/..')).rejects.toMatchObject({ exitCode: 6 })
      await expect(dirs.parentOf('../x')).rejects.toMatchObject({ exitCode: 6 })
    } finally {
      await dirs.close()
    }
  })
})

describe('removal of what Node cannot remove', () => {
  it('removes a symlink past PATH_MAX as a link: what it names keeps its mode', async () => {
    const dir = tempDir('long')
    const victim = join(tempDir('outside'), 'victim')
    writeFileSync(victim, 'precious')
    await fs.chmod(victim, 0o644)
    const dirs = await PinnedDirs.open(dir)
    let rel = ''
    try {
      for (let i = 0; i < 17; i++) {
        const at = await dirs.dir(rel)
        await fs.mkdir(Buffer.from(`/proc/self/fd/${at!.fd}/${'z'.repeat(250)}`))
        rel = rel === '' ? 'z'.repeat(250) : `${rel}/${'z'.repeat(250)}`
      }
      const at = await dirs.dir(rel)
      await fs.symlink(victim, Buffer.from(`/proc/self/fd/${at!.fd}/link`))
    } finally {
      await dirs.close()
    }
    await removeTree(join(dir, rel, 'link'))
    expect(lstatSync(victim).mode & 0o777).toBe(0o644)
    const after = await PinnedDirs.open(dir)
    try {
      const at = await after.dir(rel)
      expect(await fs.readdir(Buffer.from(`/proc/self/fd/${at!.fd}`))).toEqual([])
    } finally {
      await after.close()
    }
  })
})
