import { execFileSync } from 'node:child_process'
import { promises as fs, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { type Store, Workspace, checkout, snapshotWorkspace } from '../../src/index.js'
import { scanClock, scanWorkspace } from '../../src/world/scan/scanWorkspace.js'
import { workspaceLock } from '../../src/world/workspace/workspaceLock.js'
import { tooRecent } from '../../src/world/scan/workspaceIndex.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'
import { dirState, storeWorkspace } from '../helpers/workspace.js'

/** Past the index's racy window (50 ms): files written before it are vouched for by their stat. */
const settle = () => new Promise((r) => setTimeout(r, 120))

/** The tree a scan with no index at all finds (the index is put back after). */
async function coldTree(dir: string, store: Store): Promise<string> {
  const index = store.path('index')
  const saved = await fs.readFile(index).catch(() => null)
  await fs.rm(index, { force: true })
  try {
    return (await scanWorkspace({ store, dir, write: false })).tree
  } finally {
    if (saved) await fs.writeFile(index, saved)
  }
}

const write = (dir: string, rel: string, content: string) => fs.mkdir(join(dir, rel, '..'), { recursive: true }).then(() => fs.writeFile(join(dir, rel), content))

describe('the workspace index', () => {
  it('gives after every kind of change the tree a scan without it gives', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a', 'src/x.ts': 'x', 'src/deep/y.ts': 'y', 'src/deep/z.ts': 'z', 'docs/readme.md': 'r', link: { symlink: 'a.txt' } })
    const changes: Array<[string, () => Promise<unknown>]> = [
      ['nothing', async () => {}],
      [
        'same size, new bytes, mtime put back',
        async () => {
          const st = await fs.stat(join(dir, 'src/deep/y.ts'))
          await fs.writeFile(join(dir, 'src/deep/y.ts'), 'Y')
          await fs.utimes(join(dir, 'src/deep/y.ts'), st.atime, st.mtime)
        },
      ],
      ['a file added deep down', () => write(dir, 'src/deep/new.ts', 'new')],
      ['a file deleted', () => fs.rm(join(dir, 'src/deep/z.ts'))],
      ['a file renamed in its directory', () => fs.rename(join(dir, 'src/x.ts'), join(dir, 'src/w.ts'))],
      ['the exec bit alone', () => fs.chmod(join(dir, 'a.txt'), 0o755)],
      ['a symlink retargeted', () => fs.rm(join(dir, 'link')).then(() => fs.symlink('docs/readme.md', join(dir, 'link')))],
      ['a file replaced by a directory of its name', () => fs.rm(join(dir, 'docs/readme.md')).then(() => write(dir, 'docs/readme.md/inner', 'i'))],
      ['a directory replaced by a symlink', () => fs.rm(join(dir, 'docs'), { recursive: true }).then(() => fs.symlink('src', join(dir, 'docs')))],
      ['an empty directory added', () => fs.mkdir(join(dir, 'empty/nested'), { recursive: true })],
      [
        'an ignore rule leaving out a file of a directory that then stays as it is',
        () => write(dir, '.forkpointignore', '*.log\n').then(() => write(dir, 'src/deep/keep.log', 'kept')),
      ],
      ['the rule edited in place, letting that file back in', () => fs.writeFile(join(dir, '.forkpointignore'), '# nothing ignored\n')],
      ['an ignore rule for a nested file', () => write(dir, '.forkpointignore', 'new.ts\n')],
      ['the ignore rule dropped', () => fs.rm(join(dir, '.forkpointignore'))],
      ['an empty directory removed', () => fs.rm(join(dir, 'empty'), { recursive: true })],
      ['one file among many directories', () => write(dir, 'src/deep/y.ts', 'YY')],
    ]
    await snapshotWorkspace({ dir })
    for (const [what, change] of changes) {
      await change()
      await settle()
      const warm = await snapshotWorkspace({ dir })
      expect({ what, tree: warm.tree }).toEqual({ what, tree: await coldTree(dir, store) })
    }
  })

  it('reads only the changed file, and writes nothing when nothing changed', async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 200; i++) files[`d${i % 10}/f${i}.txt`] = `file ${i}`
    const { dir, store } = await storeWorkspace(files)
    await settle()
    await snapshotWorkspace({ dir })
    await write(dir, 'd3/f3.txt', 'changed')
    await settle()
    const warm = await snapshotWorkspace({ dir })
    expect(warm).toMatchObject({ created: true, hashedFiles: 1, files: 200 })
    const indexBefore = await fs.stat(store.path('index'))
    const again = await snapshotWorkspace({ dir })
    expect(again).toMatchObject({ created: false, hashedFiles: 0, id: warm.id })
    expect((await fs.stat(store.path('index'))).ino).toBe(indexBefore.ino) // not rewritten
  })

  it('lists only the directories whose entries changed, and one changed in the last clock ticks once more', async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 200; i++) files[`d${i % 10}/f${i}.txt`] = `file ${i}`
    const { dir, store } = await storeWorkspace(files)
    await settle()
    expect(await snapshotWorkspace({ dir })).toMatchObject({ listedDirs: 11 })
    await write(dir, 'd3/f3.txt', 'changed')
    await settle()
    expect(await snapshotWorkspace({ dir })).toMatchObject({ listedDirs: 0, hashedFiles: 1 })
    await write(dir, 'd4/new.txt', 'new')
    // The scan's clock is set against the change itself, however slowly a busy machine runs this.
    const changed = statSync(join(dir, 'd4')).mtimeMs
    const clock = vi.spyOn(scanClock, 'now').mockReturnValue(changed + 10)
    try {
      expect(await snapshotWorkspace({ dir })).toMatchObject({ listedDirs: 1, files: 201 })
      expect((await snapshotWorkspace({ dir })).listedDirs).toBe(1) // listed just after a change: too recent to vouch for
      clock.mockReturnValue(changed + 10_000)
      expect((await snapshotWorkspace({ dir })).listedDirs).toBe(1) // old enough now: listed once more, then trusted
      const indexBefore = await fs.stat(store.path('index'))
      expect(await snapshotWorkspace({ dir })).toMatchObject({ listedDirs: 0, hashedFiles: 0, created: false })
      expect((await fs.stat(store.path('index'))).ino).toBe(indexBefore.ino) // nothing new to save
    } finally {
      clock.mockRestore()
    }
  })

  it('lists a directory with ignore-rule files or skipped entries every time, and follows --respect-gitignore', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a', 'sub/.gitignore': '*.tmp\n', 'sub/x.tmp': 'x', 'sub/deeper/y.tmp': 'y', 'pipes/keep.txt': 'k' })
    execFileSync('mkfifo', [join(dir, 'pipes', 'fifo')])
    await settle()
    const cold = await snapshotWorkspace({ dir, respectGitignore: true })
    expect(cold.skipped).toEqual(['pipes/fifo'])
    await settle()
    const warm = await snapshotWorkspace({ dir, respectGitignore: true })
    expect(warm).toMatchObject({ listedDirs: 2, skipped: ['pipes/fifo'], tree: cold.tree }) // sub and pipes
    const plain = await snapshotWorkspace({ dir, respectGitignore: false }) // remembered otherwise
    expect(plain.tree).toBe(await coldTree(dir, store))
    expect(plain.tree).not.toBe(cold.tree) // the *.tmp files are back
    expect((await snapshotWorkspace({ dir, respectGitignore: true })).tree).toBe(cold.tree)
  })

  it('follows a workspace root given as a symlink: what it lists is its target', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a' })
    const link = join(tempDir('link'), 'ws')
    await fs.symlink(dir, link)
    await settle()
    await snapshotWorkspace({ dir: link })
    await snapshotWorkspace({ dir: link })
    await write(dir, 'b.txt', 'b')
    await settle()
    expect(await snapshotWorkspace({ dir: link })).toMatchObject({ files: 2, listedDirs: 1 })
  })

  it('widens the racy window for whole-second times (file systems with one- or two-second ticks)', () => {
    const start = 1_800_000_000_500
    expect(tooRecent(start - 1000.25, start - 1000.25, start)).toBe(false) // 1 s old, fine-grained clock
    expect(tooRecent(start - 500, start - 500, start)).toBe(true) // 1 s old, but whole seconds
    expect(tooRecent(start - 2500, start - 2500, start)).toBe(false)
    expect(tooRecent(start - 20.5, start - 5000.5, start)).toBe(true)
  })

  for (const [what, spoil] of [
    ['truncated', (bytes: Buffer) => bytes.subarray(0, bytes.length - 7)],
    ['with a flipped byte', (bytes: Buffer) => Buffer.from(bytes.map((b, i) => (i === 100 ? b ^ 1 : b)))],
    ['garbage', () => Buffer.from('not an index at all')],
    ['empty', () => Buffer.alloc(0)],
  ] as const) {
    it(`ignores an index that is ${what}: a full scan, the right tree`, async () => {
      const { dir, store } = await storeWorkspace({ 'a.txt': 'a', 'd/b.txt': 'b', 'd/e/c.txt': 'c' })
      const first = await snapshotWorkspace({ dir })
      await settle()
      await fs.writeFile(store.path('index'), spoil(await fs.readFile(store.path('index'))))
      const again = await snapshotWorkspace({ dir })
      expect(again).toMatchObject({ tree: first.tree, hashedFiles: 3, created: false })
    })
  }

  it("ignores another workspace's index", async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a' })
    await snapshotWorkspace({ dir })
    const other = await storeWorkspace({ 'a.txt': 'other' })
    await fs.copyFile(store.path('index'), other.store.path('index'))
    await settle()
    const scan = await snapshotWorkspace({ dir: other.dir })
    expect(scan.tree).toBe(await coldTree(other.dir, other.store))
    expect(scan.hashedFiles).toBe(1)
  })

  it('stores right files large enough to be hashed on a second thread (40 MiB of 1 MiB files)', async () => {
    const files: Record<string, Buffer> = {}
    for (let i = 0; i < 40; i++) files[`blobs/f${i}.bin`] = Buffer.alloc(1024 * 1024, i) // 40 MiB, 1 MiB each: the worker runs
    const { dir } = await storeWorkspace(files)
    const snap = await snapshotWorkspace({ dir })
    expect(snap).toMatchObject({ hashedFiles: 40, files: 40, bytes: 40 * 1024 * 1024 })
    const out = join(tempDir('out'), 'copy')
    await checkout({ dir, id: snap.id, into: out })
    expect(await dirState(out)).toEqual(await dirState(dir))
  })
})

describe('the workspace lock', () => {
  it('makes a snapshot wait while a commit or checkout holds the workspace, so it never sees half of one', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a' })
    const lock = await workspaceLock(store)
    let done = false
    const snap = snapshotWorkspace({ dir }).then((r) => ((done = true), r))
    await new Promise((r) => setTimeout(r, 300))
    expect(done).toBe(false)
    await fs.writeFile(join(dir, 'a.txt'), 'written under the lock') // the step the snapshot must see whole
    await lock.release()
    const result = await snap
    expect(result.files).toBe(1)
    expect(await fs.readFile(join(dir, 'a.txt'), 'utf8')).toBe('written under the lock')
    expect(result.tree).toBe(await coldTree(dir, store))
  })

  it('is the lock a branch commit into the workspace takes', async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a' }) })
    const b = await ws.branch('waits')
    await fs.writeFile(join(b.path, 'a.txt'), 'from the branch')
    const lock = await workspaceLock(ws.store)
    let done = false
    const commit = b.commit().then(() => (done = true))
    await new Promise((r) => setTimeout(r, 300))
    expect(done).toBe(false)
    await lock.release()
    await commit
    expect(await fs.readFile(join(ws.dir, 'a.txt'), 'utf8')).toBe('from the branch')
  })

  it("makes a workspace's refresh, and a new branch's base after another process's commit, wait for it", async () => {
    const ws = await Workspace.open({ dir: await makeWorkspace({ 'a.txt': 'a', 'b.txt': 'b' }) })
    await ws.branch('first').then((b) => b.abort()) // the base exists: the next branch after a commit advances it
    const other = await Workspace.open({ dir: ws.dir })
    const b = await other.branch('elsewhere')
    await fs.writeFile(join(b.path, 'b.txt'), 'committed elsewhere')
    await b.commit()
    const lock = await workspaceLock(ws.store)
    let done = 0
    const third = await Workspace.open({ dir: ws.dir })
    const refreshed = third.refresh().then(() => done++)
    const branched = ws.branch('after').then((br) => ((done += 1), br))
    await new Promise((r) => setTimeout(r, 300))
    expect(done).toBe(0)
    await fs.writeFile(join(ws.dir, 'a.txt'), 'written under the lock') // the step both must see whole
    await lock.release()
    await refreshed
    const fresh = await third.branch('fresh')
    expect(await fs.readFile(join(fresh.path, 'a.txt'), 'utf8')).toBe('written under the lock')
    const after = await branched // advanced by the commit's paths only: a direct edit waits for a refresh
    expect(await fs.readFile(join(after.path, 'b.txt'), 'utf8')).toBe('committed elsewhere')
    expect(await fs.readFile(join(after.path, 'a.txt'), 'utf8')).toBe('a')
    await Promise.all([fresh.abort(), after.abort()])
  })
})
