import { spawnSync } from 'node:child_process'
import { existsSync, promises as fs, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import * as api from '../../src/index.js'
import { BranchError, Workspace } from '../../src/index.js'
import { stagedPath, writeCommitJournal } from '../../src/branch/commit/commitJournal.js'
import { readGeneration } from '../../src/branch/lifecycle/branchStore.js'
import { hostMountVia } from '../../src/branch/mount/hostMount.js'
import { LIB } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'

const dead = { pid: 2 ** 22 + 1, start: '0' }

describe('interrupted commits', () => {
  it('are finished on the next open when they were applying', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a', 'gone.txt': 'g' }) })
    const b = await ws.branch('half')
    const temp = stagedPath('a.txt', 'new', b.id)
    await fs.writeFile(join(ws.dir, temp), 'from branch')
    await writeCommitJournal(ws.store, {
      kind: 'commit-journal',
      schemaVersion: 1,
      phase: 'applying',
      branch: b.id,
      parent: null,
      committer: dead,
      generation: 1,
      ops: [
        { type: 'put', path: 'a.txt' },
        { type: 'delete', path: 'gone.txt' },
      ],
    })
    const again = await Workspace.open({ dir: ws.dir })
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('from branch')
    expect(existsSync(join(ws.dir, 'gone.txt'))).toBe(false)
    expect(existsSync(join(ws.dir, temp))).toBe(false)
    expect(await readGeneration(again.store, null)).toBe(1)
    expect(await again.branches()).toEqual([])
  })

  it('are rolled back on the next open when they were staging, keeping the branch', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }) })
    const b = await ws.branch('staging', { persistent: true })
    await fs.writeFile(join(b.path, 'a.txt'), 'branch')
    const temp = stagedPath('a.txt', 'new', b.id)
    await fs.writeFile(join(ws.dir, temp), 'partial')
    await writeCommitJournal(ws.store, {
      kind: 'commit-journal',
      schemaVersion: 1,
      phase: 'staging',
      branch: b.id,
      parent: null,
      committer: dead,
      generation: 1,
      ops: [{ type: 'put', path: 'a.txt' }],
    })
    const again = await Workspace.open({ dir: ws.dir })
    expect(existsSync(join(ws.dir, temp))).toBe(false)
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('a')
    const kept = await again.openBranch('staging')
    await kept.commit()
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('branch')
  })
})

describe('concurrent committers', () => {
  it('are serialized by the parent lock: disjoint siblings both land, same-path ones conflict', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a', 'b.txt': 'b' }) })
    const branches = await Promise.all(['x', 'y', 'z'].map((n) => ws.branch(n)))
    await fs.writeFile(join(branches[0]!.path, 'a.txt'), 'x')
    await fs.writeFile(join(branches[1]!.path, 'b.txt'), 'y')
    await fs.writeFile(join(branches[2]!.path, 'b.txt'), 'z')
    const results = await Promise.allSettled(branches.map((b) => b.commit()))
    expect(results[0]!.status).toBe('fulfilled')
    expect(results.filter((r) => r.status === 'rejected').map((r) => r.reason.code)).toEqual(['ConflictError'])
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('x')
    expect(['y', 'z']).toContain(readFileSync(join(ws.dir, 'b.txt'), 'utf8'))
    for (const b of branches) await b.abort()
  })
})

describe('hostile input', () => {
  it('refuses branch names that are paths', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }) })
    for (const name of ['../x', '/abs', 'a/b', '', '.hidden', 'x\0y']) await expect(ws.branch(name)).rejects.toMatchObject({ exitCode: 2 })
    await expect(ws.branch('ok', { backend: 'zfs' as never })).rejects.toMatchObject({ exitCode: 2 })
    expect(await ws.branches()).toEqual([])
  })

  it('never commits through a parent directory replaced by a symlink', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'd/f.txt': 'f' }) })
    const outside = await makeWorkspace({ 'f.txt': 'outside' })
    const b = await ws.branch('x')
    await fs.writeFile(join(b.path, 'd/f.txt'), 'branch')
    await fs.rm(join(ws.dir, 'd'), { recursive: true })
    await fs.symlink(outside, join(ws.dir, 'd'))
    await expect(b.commit()).rejects.toMatchObject({ code: 'ConflictError', data: { paths: ['d/f.txt'] } })
    expect(readFileSync(join(outside, 'f.txt'), 'utf8')).toBe('outside')
    await b.abort()
  })

  it('makes one of two branches asked for at once under the same name, and each of many with names of their own', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }) })
    const same = await Promise.allSettled([ws.branch('twin'), ws.branch('twin')])
    expect(same.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected'])
    expect(same.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'BranchExistsError', exitCode: 2 } })
    const many = await Promise.all(Array.from({ length: 12 }, (_, i) => ws.branch(`many-${i}`)))
    expect(new Set((await ws.branches()).map((b) => b.name))).toEqual(new Set(['twin', ...many.map((b) => b.name)]))
    for (const b of [...many, ...same.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))]) await b.abort()
  })

  it('refuses to commit or abort out of order', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }) })
    const b = await ws.branch('p')
    const c = await b.branch('c')
    await expect(b.commit()).rejects.toMatchObject({ code: 'BranchBusyError', exitCode: 3 })
    await expect(ws.branch('p')).rejects.toMatchObject({ code: 'BranchExistsError', exitCode: 2 })
    await c.abort()
    await b.commit()
    expect(await b.commit()).toMatchObject({ name: 'p' }) // already committed: the first result again
    await b.abort() // already ended: nothing to do
  })
})

it('every branch error is a BranchError whose code is its class name', () => {
  const names = ['ConflictError', 'BranchStaleError', 'BranchNotFoundError', 'BranchExistsError', 'BranchBusyError', 'BackendUnavailableError', 'SandboxError'] as const
  for (const name of names) {
    const err = new (api[name] as unknown as new (m: string) => BranchError<object>)('x')
    expect(err).toBeInstanceOf(BranchError)
    expect(err.code).toBe(name)
    expect([2, 3]).toContain(err.exitCode)
  }
})

describe('a shared namespace holder that dies', () => {
  it('takes its mounts along, and the live branches are mounted again from their upper layers on next use', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }), backend: 'overlay' })
    const b = await ws.branch('survivor')
    await fs.writeFile(join(b.path, 'a.txt'), 'kept')
    const holder = Number(/^\/proc\/(\d+)\/root/.exec(b.path)![1])
    process.kill(holder, 'SIGKILL')
    const running = () => {
      try {
        return !readFileSync(`/proc/${holder}/stat`, 'utf8').includes(') Z ')
      } catch {
        return false
      }
    }
    while (running()) await new Promise((r) => setTimeout(r, 5))
    const again = await ws.openBranch('survivor') // a new holder, the volatile overlay's mark cleared
    expect(again.path).not.toBe(b.path)
    expect(readFileSync(join(again.path, 'a.txt'), 'utf8')).toBe('kept')
    const c = await ws.branch('after') // and new branches work too
    expect(readFileSync(join(c.path, 'a.txt'), 'utf8')).toBe('a')
    await c.abort()
    await again.commit()
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('kept')
  })
})

/**
 * A persistent branch is mounted in the host's mount namespace where that can be done here
 * (root; or fuse-overlayfs), else in a holder of its own. Either way its maker records
 * where before it mounts: the host view in the state, the holder in its pid file.
 */
describe('a persistent branch whose maker crashed between recording where it mounts and mounting it', () => {
  const stray = async (ws: Workspace, name: string): Promise<{ id: string; gone: () => Promise<boolean> }> => {
    const b = await ws.branch(name, { persistent: true })
    const path = join(ws.store.root, 'branches', 'live', b.id, 'state.json')
    const state = JSON.parse(readFileSync(path, 'utf8'))
    if (state.hostView) {
      // crashed before the mount: recorded, not mounted
      const view = b.path
      expect(spawnSync(hostMountVia() === 'kernel' ? 'umount' : 'fusermount3', hostMountVia() === 'kernel' ? [view] : ['-u', view]).status).toBe(0)
      return { id: b.id, gone: async () => !readFileSync('/proc/self/mountinfo', 'utf8').includes(view) && !existsSync(view) }
    }
    await fs.writeFile(path, JSON.stringify({ ...state, holder: null })) // as written before the mount
    return { id: b.id, gone: () => holderGone(state.holder.pid as number) }
  }
  const holderGone = async (pid: number) => {
    for (let i = 0; i < 200; i++) {
      try {
        if (readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')) return true
      } catch {
        return true
      }
      await new Promise((r) => setTimeout(r, 5))
    }
    return false
  }

  it('leaves no holder or mount once it is aborted', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }), backend: 'overlay' })
    const { gone } = await stray(ws, 'crashed')
    await (await ws.openBranch('crashed')).abort()
    expect(await gone()).toBe(true)
  })

  it('is mounted again (an unrecorded holder replaced) when it is used again, its changes kept', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }), backend: 'overlay' })
    const { id, gone } = await stray(ws, 'crashed')
    await fs.writeFile(join(ws.store.root, 'branches', 'live', id, 'upper', 'a.txt'), 'kept')
    const again = await ws.openBranch('crashed')
    expect(readFileSync(join(again.path, 'a.txt'), 'utf8')).toBe('kept')
    await again.abort()
    expect(await gone()).toBe(true)
  })
})

describe('a branch made onHost (an unsandboxed candidate’s) whose process was killed', () => {
  it('is a directory of the host while it lives, and the next open tears it down, host mount and all', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a\n' })
    const maker = join(tempDir('onhost-maker'), 'maker.mjs')
    await fs.writeFile(
      maker,
      `import { Workspace } from ${JSON.stringify(LIB)}\nconst ws = await Workspace.open({ dir: process.argv[2] })\nconsole.log((await ws.branch('plain', { onHost: true })).path)\nprocess.kill(process.pid, 'SIGKILL')\n`,
    )
    const made = spawnSync(process.execPath, [maker, dir], { encoding: 'utf8' })
    expect([made.signal, made.stderr]).toEqual(['SIGKILL', ''])
    const path = made.stdout.trim()
    expect(path).toMatch(new RegExp(`^${dir}/\\.forkpoint/branches/live/`))
    expect(readFileSync(join(path, 'a.txt'), 'utf8')).toBe('a\n') // outlives its maker, unlike a holder's /proc/<pid>/root path
    const ws = await Workspace.open({ dir })
    expect(await ws.branches()).toEqual([])
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(dir)
    expect(existsSync(path)).toBe(false)
  })
})
