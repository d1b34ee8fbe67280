import { existsSync, promises as fs, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Workspace } from '../../src/index.js'
import { creationLock } from '../../src/branch/lifecycle/creationLock.js'
import { self } from '../../src/sandbox/processId.js'
import { makeWorkspace } from '../helpers/tmp.js'

const read = (path: string) => readFileSync(path, 'utf8')
const bases = (ws: Workspace) => readdirSync(join(ws.store.root, 'branches', 'bases'))
/** The base tree a live branch started from, as its state file records it. */
const baseTreeOf = (ws: Workspace, id: string): string => JSON.parse(read(join(ws.store.root, 'branches', 'live', id, 'state.json'))).baseTree
/** What a full scan of the workspace gives now (another Workspace object, so nothing is shared). */
const fullScan = async (ws: Workspace) => (await Workspace.open({ dir: ws.dir })).refresh()
/** Every path below `dir` but the store, with its type, exec bit and content or target. */
async function listing(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = []
  for (const name of (await fs.readdir(join(dir, prefix))).sort()) {
    const rel = prefix ? `${prefix}/${name}` : name
    if (rel === '.forkpoint') continue
    const st = await fs.lstat(join(dir, rel))
    if (st.isSymbolicLink()) out.push(`${rel} -> ${await fs.readlink(join(dir, rel))}`)
    else if (st.isDirectory()) out.push(`${rel}/`, ...(await listing(dir, rel)))
    else out.push(`${rel} ${st.mode & 0o111 ? 'x' : '-'} ${read(join(dir, rel))}`)
  }
  return out
}

describe('the base after a commit', () => {
  it('is the old base with the committed paths scanned again: the same tree as a full rescan, its view advanced in place', async () => {
    const ws = await Workspace.open({
      dir: await makeWorkspace({ 'a.txt': 'a', 'src/main.ts': 'main', 'src/lib/util.ts': 'util', 'docs/x.md': 'x', 'old-link': { symlink: 'a.txt' } }),
      backend: 'overlay',
    })
    await (await ws.branch('warm')).abort()
    expect(bases(ws)).toHaveLength(1)
    const b = await ws.branch('change')
    await fs.writeFile(join(b.path, 'src/main.ts'), 'main v2')
    await fs.mkdir(join(b.path, 'new/deep'), { recursive: true })
    await fs.writeFile(join(b.path, 'new/deep/file.txt'), 'deep')
    await fs.writeFile(join(b.path, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 })
    await fs.rm(join(b.path, 'src/lib'), { recursive: true })
    await fs.rm(join(b.path, 'old-link'))
    await fs.symlink('docs/x.md', join(b.path, 'new-link'))
    await b.commit()
    const next = await ws.branch('next')
    expect(baseTreeOf(ws, next.id)).toBe(await fullScan(ws))
    expect(bases(ws)).toHaveLength(1) // the old view was changed into the new one, not copied
    expect(read(join(next.path, 'src/main.ts'))).toBe('main v2')
    expect(read(join(next.path, 'new/deep/file.txt'))).toBe('deep')
    expect((await fs.stat(join(next.path, 'run.sh'))).mode & 0o111).not.toBe(0)
    expect(existsSync(join(next.path, 'src/lib'))).toBe(false)
    expect(existsSync(join(next.path, 'old-link'))).toBe(false)
    expect(await fs.readlink(join(next.path, 'new-link'))).toBe('docs/x.md')
    expect(read(join(next.path, 'docs/x.md'))).toBe('x')
    await next.abort()
  })

  it('follows a committed path that changed its type: directory to file or symlink, file to directory, symlink retargeted', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a', 'd/sub/f': 'f', 'e/h': 'h', l: { symlink: 'a.txt' } }), backend: 'overlay' })
    await (await ws.branch('warm')).abort()
    const b = await ws.branch('retype')
    await fs.rm(join(b.path, 'd'), { recursive: true })
    await fs.writeFile(join(b.path, 'd'), 'now a file')
    await fs.rm(join(b.path, 'a.txt'))
    await fs.mkdir(join(b.path, 'a.txt'))
    await fs.writeFile(join(b.path, 'a.txt/in'), 'in')
    await fs.rm(join(b.path, 'e'), { recursive: true })
    await fs.symlink('d', join(b.path, 'e'))
    await fs.rm(join(b.path, 'l'))
    await fs.symlink('e', join(b.path, 'l'))
    await b.commit()
    const next = await ws.branch('next')
    expect(baseTreeOf(ws, next.id)).toBe(await fullScan(ws))
    expect(read(join(next.path, 'd'))).toBe('now a file')
    expect(read(join(next.path, 'a.txt/in'))).toBe('in')
    expect(await fs.readlink(join(next.path, 'e'))).toBe('d')
    expect(await fs.readlink(join(next.path, 'l'))).toBe('e')
    await next.abort()
  })

  it('leaves the view of a live sibling alone, and catches up with several commits at once', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a', 'b.txt': 'b' }), backend: 'overlay' })
    const sibling = await ws.branch('sibling')
    const x = await ws.branch('x')
    const y = await ws.branch('y')
    await fs.writeFile(join(x.path, 'a.txt'), 'a2')
    await fs.writeFile(join(y.path, 'c.txt'), 'c')
    await x.commit()
    await y.commit()
    const next = await ws.branch('next')
    expect(baseTreeOf(ws, next.id)).toBe(await fullScan(ws))
    expect(read(join(next.path, 'a.txt'))).toBe('a2')
    expect(read(join(next.path, 'c.txt'))).toBe('c')
    expect(read(join(sibling.path, 'a.txt'))).toBe('a') // its base directory was not touched
    expect(existsSync(join(sibling.path, 'c.txt'))).toBe(false)
    await Promise.all([sibling.abort(), next.abort()])
  })

  it('sees commits made through another Workspace object (another process) by their records', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a' })
    const [one, two] = [await Workspace.open({ dir, backend: 'overlay' }), await Workspace.open({ dir, backend: 'overlay' })]
    await (await one.branch('warm')).abort()
    await two.withBranch('theirs', async (b) => fs.writeFile(join(b.path, 'a.txt'), 'theirs'))
    const next = await one.branch('next')
    expect(read(join(next.path, 'a.txt'))).toBe('theirs')
    await next.abort()
  })

  it('keeps ignored paths out, and rescans when an ignore file changes', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a', '.forkpointignore': '*.log\n' }), backend: 'overlay' })
    await ws.withBranch('log', async (b) => {
      await fs.writeFile(join(b.path, 'out.log'), 'ignored')
      await fs.mkdir(join(b.path, 'sub'))
      await fs.writeFile(join(b.path, 'sub/deep.log'), 'ignored too')
      await fs.writeFile(join(b.path, 'sub/kept.txt'), 'kept')
    })
    let next = await ws.branch('next')
    expect(baseTreeOf(ws, next.id)).toBe(await fullScan(ws))
    expect(existsSync(join(next.path, 'out.log'))).toBe(false)
    expect(readdirSync(join(next.path, 'sub'))).toEqual(['kept.txt'])
    await fs.writeFile(join(next.path, '.forkpointignore'), '')
    await next.commit()
    next = await ws.branch('after-rules')
    expect(baseTreeOf(ws, next.id)).toBe(await fullScan(ws))
    expect(read(join(next.path, 'out.log'))).toBe('ignored')
    await next.abort()
  })

  it('never writes into the store through a committed path', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }), backend: 'overlay' })
    await (await ws.branch('warm')).abort()
    const b = await ws.branch('sneaky')
    await fs.mkdir(join(b.path, '.forkpoint'))
    await fs.writeFile(join(b.path, '.forkpoint', 'x'), 'x')
    await fs.writeFile(join(b.path, 'a.txt'), 'a2')
    await b.commit().catch(() => b.abort()) // refused or not, nothing is left live
    const next = await ws.branch('next')
    expect(readdirSync(next.path)).not.toContain('.forkpoint')
    expect(baseTreeOf(ws, next.id)).toBe(await fullScan(ws))
    await next.abort()
  })

  it('is not pruned by an open while a branch is being registered on it (pruning takes the creation lock)', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }), backend: 'overlay' })
    const standing = await ws.branch('old') // keeps the old view from being advanced into the new one
    const [old] = bases(ws)
    await fs.writeFile(join(ws.dir, 'a.txt'), 'edited')
    await ws.refresh()
    await (await ws.branch('new')).abort()
    await standing.abort()
    expect(bases(ws)).toHaveLength(2)
    const lock = await creationLock(ws.store)
    const opening = Workspace.open({ dir: ws.dir }) // prunes the views no live branch uses
    await new Promise((r) => setTimeout(r, 200))
    // What createBranch does under the lock: register a branch on the old view, then mount it.
    const view = join(ws.store.root, 'branches', 'bases', old!)
    const id = 'registering-0123456789'
    await fs.mkdir(join(ws.store.root, 'branches', 'live', id), { recursive: true })
    const state = {
      kind: 'branch-state',
      schemaVersion: 1,
      id,
      name: id,
      parent: null,
      backend: 'overlay',
      baseTree: `sha256:${old}`,
      parentGeneration: 0,
      owner: self,
      holder: null,
      createdAt: new Date().toISOString(),
    }
    await fs.writeFile(join(ws.store.root, 'branches', 'live', id, 'state.json'), JSON.stringify(state))
    await lock.release()
    await opening
    expect(existsSync(view)).toBe(true)
    await fs.rm(join(ws.store.root, 'branches', 'live', id), { recursive: true })
  })
})

describe('the base directory of another tree', () => {
  it('is made from a view no branch uses by changing it where the trees differ, and holds exactly the new tree', async () => {
    const ws = await Workspace.open({
      dir: await makeWorkspace({ 'a.txt': 'a', 'src/main.ts': 'main', 'src/lib/util.ts': 'util', 'gone/x.md': 'x', 'becomes-dir': 'file', link: { symlink: 'a.txt' } }),
      backend: 'overlay',
    })
    await (await ws.branch('first')).abort()
    expect(bases(ws)).toHaveLength(1)
    await fs.writeFile(join(ws.dir, 'src/main.ts'), 'main v2')
    await fs.rm(join(ws.dir, 'gone'), { recursive: true })
    await fs.rm(join(ws.dir, 'becomes-dir'))
    await fs.mkdir(join(ws.dir, 'becomes-dir/deep'), { recursive: true })
    await fs.writeFile(join(ws.dir, 'becomes-dir/deep/f.txt'), 'deep')
    await fs.writeFile(join(ws.dir, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 })
    await fs.rm(join(ws.dir, 'link'))
    await fs.symlink('src/main.ts', join(ws.dir, 'link'))
    await ws.refresh()
    const next = await ws.branch('next')
    expect(bases(ws)).toHaveLength(1) // the unused view became the new one
    expect(await listing(next.path)).toEqual(await listing(ws.dir))
    await next.abort()
  })

  it('is built whole beside a view a live branch stands on', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a', 'b.txt': 'b' }), backend: 'overlay' })
    const standing = await ws.branch('standing')
    await fs.writeFile(join(ws.dir, 'a.txt'), 'a2')
    await ws.refresh()
    const next = await ws.branch('next')
    expect(bases(ws)).toHaveLength(2)
    expect(await listing(next.path)).toEqual(await listing(ws.dir))
    expect(read(join(standing.path, 'a.txt'))).toBe('a')
    await next.abort()
    await standing.abort()
  })
})
