import { promises as fs } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { snapshotWorkspace } from '../../src/index.js'
import { readSnapshot } from '../../src/world/tree/readObjects.js'
import { scanWorkspace } from '../../src/world/scan/scanWorkspace.js'
import { treeSource } from '../../src/world/tree/treeSource.js'
import { admitTree } from '../../src/world/checkout/admitTree.js'
import { makeTree } from '../../src/objects/Tree.js'
import type { Digest } from '../../src/objects/digest.js'
import { withLongPath } from '../../src/util/longPath.js'
import { storeWorkspace } from '../helpers/workspace.js'

// In place (checkout, merge) a tree is checked only where it differs from what a scan found on disk.
describe('admitTree against the tree on disk', () => {
  const files = { 'a.txt': 'a', 'big/1.txt': '1', 'big/2.txt': '2', 'big/deep/3.txt': '3', 'gone/4.txt': '4', 'keep/5.txt': '5' }

  async function treesOf(change: (dir: string) => Promise<void>) {
    const { dir, store } = await storeWorkspace(files)
    const before = await scanWorkspace({ store, dir, write: true })
    await before.persist()
    await change(dir)
    const after = (await readSnapshot(store, (await snapshotWorkspace({ dir, store, allowExternalSymlinks: true })).id)).world.tree
    return { dir, source: treeSource(store), onDisk: { tree: before.tree, files: before.files }, tree: after }
  }

  it('counts the files of the whole tree, whatever it skipped', async () => {
    const t = await treesOf(async (dir) => {
      await fs.writeFile(join(dir, 'big/new.txt'), 'n')
      await fs.rm(join(dir, 'gone'), { recursive: true })
      await fs.rm(join(dir, 'keep/5.txt'))
      await fs.mkdir(join(dir, 'keep/5.txt'))
      await fs.writeFile(join(dir, 'keep/5.txt/x'), 'x')
      await fs.writeFile(join(dir, 'keep/5.txt/y'), 'y')
    })
    const full = await admitTree({ source: t.source, chunks: noChunks, tree: t.tree, root: t.dir, allowExternalSymlinks: false })
    const inPlace = await admitTree({ source: t.source, chunks: noChunks, tree: t.tree, root: t.dir, allowExternalSymlinks: false, onDisk: t.onDisk })
    expect(full.files).toBe(7)
    expect(inPlace.files).toBe(7)
  })

  it('still refuses a symlink leading out that the tree adds in a directory otherwise unchanged', async () => {
    const t = await treesOf((dir) => fs.symlink('../../../etc', join(dir, 'big/deep/out')))
    await expect(admitTree({ source: t.source, chunks: noChunks, tree: t.tree, root: t.dir, allowExternalSymlinks: false, onDisk: t.onDisk })).rejects.toMatchObject({
      code: 'UnsafePathError',
      data: { path: 'big/deep/out' },
    })
  })

  it('still refuses a new name longer than the file system allows beside unchanged entries', async () => {
    const t = await treesOf(async () => {})
    const root = await t.source(t.tree)
    const file = root.entries.find((e) => e.name === 'a.txt')!
    const withLong = makeTree([...root.entries, { ...file, name: 'x'.repeat(256) }])
    const source = async (digest: Digest) => (digest === LONG ? withLong : t.source(digest))
    await expect(admitTree({ source, chunks: noChunks, tree: LONG, root: t.dir, allowExternalSymlinks: false, onDisk: t.onDisk })).rejects.toMatchObject({ code: 'PathLimitError' })
  })
})

// What a checkout refuses to write, a snapshot refuses to make: a process can make it a directory at a time.
describe('a snapshot of a tree no checkout writes', () => {
  it('refuses a directory more than 256 deep (exit 5, naming it) and takes it once ignored', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a' })
    const deep = Array.from({ length: 257 }, () => 'd').join('/')
    await fs.mkdir(join(dir, deep), { recursive: true })
    await fs.writeFile(join(dir, deep, 'f'), 'f')
    await expect(snapshotWorkspace({ dir, store })).rejects.toMatchObject({ code: 'PathLimitError', exitCode: 5, data: { path: deep } })
    await fs.writeFile(join(dir, '.forkpointignore'), '/d\n')
    await expect(snapshotWorkspace({ dir, store })).resolves.toMatchObject({ files: 2 })
  })

  it('refuses a file whose path is PATH_MAX bytes or more (exit 5, naming it)', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a' })
    const name = 'x'.repeat(250)
    let path = dir
    for (let i = 0; i < 17; i++) {
      path = `${path}/${name}`
      await withLongPath(path, (at) => fs.mkdir(at))
    }
    await withLongPath(`${path}/f`, (at) => fs.writeFile(at, 'f'))
    await expect(snapshotWorkspace({ dir, store })).rejects.toMatchObject({ code: 'PathLimitError', exitCode: 5, message: expect.stringMatching(/4096 bytes or more/) })
    await withLongPath(`${path}/f`, (at) => fs.unlink(at))
    for (let at = path; at !== dir; at = dirname(at)) await withLongPath(at, (reachable) => fs.rmdir(reachable))
    await expect(snapshotWorkspace({ dir, store })).resolves.toMatchObject({ files: 1 })
  })
})

const LONG: Digest = `sha256:${'0'.repeat(64)}`

/** These trees hold no chunked file. */
const noChunks = async (digest: Digest): Promise<never> => {
  throw new Error(`no chunks ${digest}`)
}
