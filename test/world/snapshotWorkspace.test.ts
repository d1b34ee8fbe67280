import { createCipheriv, createHash, randomBytes } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Store, UsageError, checkout, snapshotWorkspace, status } from '../../src/index.js'
import { CHUNKING_THRESHOLD } from '../../src/world/scan/storeFile.js'
import { readChunks, readSnapshot, readTree } from '../../src/world/tree/readObjects.js'
import { readRef } from '../../src/store/refs.js'
import { sha256 } from '../../src/objects/digest.js'
import { tempDir } from '../helpers/tmp.js'
import { countObjects, storeWorkspace } from '../helpers/workspace.js'

/** Sleep long enough that files written before it are no longer "racily clean" for the stat cache. */
const settle = () => new Promise((r) => setTimeout(r, 1100))

describe('dedup', () => {
  it('stores the same content once however many files hold it', async () => {
    const same = 'identical content\n'.repeat(100)
    const files: Record<string, string> = {}
    for (let i = 0; i < 50; i++) files[`dir${i % 5}/copy${i}.txt`] = same
    const { dir, store } = await storeWorkspace(files)
    await snapshotWorkspace({ dir })
    expect(await store.has(sha256(same))).toBe(true)
    // one blob, five subtrees (distinct: their file names differ), one root tree, one snapshot
    expect(await countObjects(store)).toBe(1 + 5 + 1 + 1)
  })

  it(`chunks files of ${CHUNKING_THRESHOLD / 1024 / 1024} MiB and more, and a 50 MB file changed in 1 MB shares most chunks`, async () => {
    const { dir, store } = await storeWorkspace()
    const size = 50 * 1024 * 1024
    const big = seededBytes('dedup: the file', size)
    await fs.writeFile(join(dir, 'big.bin'), big)
    const first = await snapshotWorkspace({ dir })
    const rootA = await readTree(store, (await readSnapshot(store, first.id)).world.tree)
    const entryA = rootA.entries[0]!
    expect(entryA).toMatchObject({ name: 'big.bin', type: 'file', size })
    if (!('chunks' in entryA)) throw new Error('a 50 MB file must be stored as chunks')
    const chunksA = await readChunks(store, entryA.chunks)
    expect(chunksA.chunks.length).toBeGreaterThan(10)
    expect(chunksA.size).toBe(size)

    // Overwrite 1 MB in the middle with new bytes.
    seededBytes('dedup: the edit', 1024 * 1024).copy(big, 20 * 1024 * 1024)
    await fs.writeFile(join(dir, 'big.bin'), big)
    const before = await storedBytes(store.root)
    const second = await snapshotWorkspace({ dir })
    const added = (await storedBytes(store.root)) - before
    expect(second.created).toBe(true)
    expect(added).toBeGreaterThan(1024 * 1024) // the changed megabyte itself is new
    expect(added).toBeLessThan(0.1 * size)

    const rootB = await readTree(store, (await readSnapshot(store, second.id)).world.tree)
    const entryB = rootB.entries[0]!
    if (!('chunks' in entryB)) throw new Error('still chunked')
    const chunksB = await readChunks(store, entryB.chunks)
    const oldIds = new Set(chunksA.chunks.map((c) => c.blob))
    const shared = chunksB.chunks.filter((c) => oldIds.has(c.blob)).length
    expect(shared / chunksB.chunks.length).toBeGreaterThan(0.8)

    // And the chunked file comes back byte for byte.
    const into = join(tempDir('big'), 'out')
    await checkout({ dir, id: second.id, into })
    expect(sha256(await fs.readFile(join(into, 'big.bin')))).toBe(sha256(big))
  }, 120_000)

  it('keeps a file just under the threshold as one blob', async () => {
    const { dir, store } = await storeWorkspace({ 'f.bin': randomBytes(CHUNKING_THRESHOLD - 1) })
    const snap = await snapshotWorkspace({ dir })
    const root = await readTree(store, (await readSnapshot(store, snap.id)).world.tree)
    expect(root.entries[0]).toHaveProperty('blob')
  })
})

/**
 * Incompressible bytes that are the same on every run (an AES-CTR keystream), so the dedup
 * figure does not vary between runs: with normalized chunking, how many chunks an edit
 * disturbs depends on where the old and new cut points happen to fall.
 */
function seededBytes(seed: string, size: number): Buffer {
  const key = createHash('sha256').update(seed).digest()
  return createCipheriv('aes-256-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(size))
}

/** Bytes of every object file in a store. */
async function storedBytes(storeDir: string): Promise<number> {
  let total = 0
  const base = join(storeDir, 'objects', 'sha256')
  for (const shard of await fs.readdir(base)) {
    for (const name of await fs.readdir(join(base, shard))) total += (await fs.stat(join(base, shard, name))).size
  }
  return total
}

describe('unchanged workspace and the stat cache', () => {
  it('a second snapshot of an unchanged workspace writes no object and returns the same id and tree', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a', 'd/b.txt': 'b', e: { dir: true } })
    const first = await snapshotWorkspace({ dir })
    const objects = await countObjects(store)
    const again = await snapshotWorkspace({ dir })
    expect(again).toMatchObject({ id: first.id, tree: first.tree, created: false })
    expect(await countObjects(store)).toBe(objects)
  })

  it('does not re-read files the stat cache vouches for', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a', 'd/b.txt': 'b' })
    await settle()
    const first = await snapshotWorkspace({ dir })
    expect(first.hashedFiles).toBe(2)
    const second = await snapshotWorkspace({ dir })
    expect(second.hashedFiles).toBe(0)
    expect(second.tree).toBe(first.tree)
  })

  it('a touched file with the same content yields the same tree', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'same', 'b.txt': 'other' })
    await settle()
    const first = await snapshotWorkspace({ dir })
    const objects = await countObjects(store)
    const later = new Date(Date.now() + 60_000)
    await fs.utimes(join(dir, 'a.txt'), later, later)
    const second = await snapshotWorkspace({ dir })
    expect(second.hashedFiles).toBe(1)
    expect(second).toMatchObject({ id: first.id, tree: first.tree, created: false })
    expect(await countObjects(store)).toBe(objects)
  })

  it('detects new content of the same size with the mtime put back (ctime and inode tell)', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'aaaa', 'b.txt': 'bbbb' })
    const old = new Date('2020-01-01T00:00:00Z')
    await fs.utimes(join(dir, 'a.txt'), old, old)
    await fs.utimes(join(dir, 'b.txt'), old, old)
    await settle()
    const first = await snapshotWorkspace({ dir })
    expect((await snapshotWorkspace({ dir })).hashedFiles).toBe(0) // the cache holds both files

    // Same size, same mtime, new bytes written in place (same inode: only ctime differs).
    await fs.writeFile(join(dir, 'a.txt'), 'AAAA')
    await fs.utimes(join(dir, 'a.txt'), old, old)
    // Same size, same mtime, replaced by a new file (new inode).
    await fs.writeFile(join(dir, 'b.tmp'), 'BBBB')
    await fs.utimes(join(dir, 'b.tmp'), old, old)
    await fs.rename(join(dir, 'b.tmp'), join(dir, 'b.txt'))

    const st = await status({ dir })
    expect(st.changes.map((c) => [c.path, c.status])).toEqual([
      ['a.txt', 'modified'],
      ['b.txt', 'modified'],
    ])
    const second = await snapshotWorkspace({ dir })
    expect(second.created).toBe(true)
    expect(second.tree).not.toBe(first.tree)
  })

  it('detects a change of the exec bit alone', async () => {
    const { dir } = await storeWorkspace({ 'x.sh': 'echo' })
    await settle()
    await snapshotWorkspace({ dir })
    await fs.chmod(join(dir, 'x.sh'), 0o755)
    expect((await status({ dir })).changes).toEqual([{ path: 'x.sh', status: 'mode', old: { type: 'file', mode: 0o644, size: 4 }, new: { type: 'file', mode: 0o755, size: 4 } }])
  })
})

describe('snapshot edge cases', () => {
  it('leaves the store out however the scan reaches it: through a symlink to it, or a symlinked workspace root', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a', 'src/b.txt': 'b' })
    const link = join(tempDir('links'), 'ws')
    await fs.mkdir(join(link, '..'), { recursive: true })
    await fs.symlink(dir, link)
    await new Promise((r) => setTimeout(r, 120)) // past the racy window: the index vouches for the directories
    const names = async (snapshot: { tree: string }) => (await readTree(store, snapshot.tree as `sha256:${string}`)).entries.map((e) => e.name)
    const viaLinkedStore = await snapshotWorkspace({ dir, store: await Store.open(join(link, '.forkpoint')) })
    expect(await names(viaLinkedStore)).toEqual(['a.txt', 'src'])
    const direct = await snapshotWorkspace({ dir }) // the index the first scan saved, read with the store's plain path
    expect(direct.tree).toBe(viaLinkedStore.tree)
    expect(direct.listedDirs).toBe(0)
    const viaLinkedRoot = await snapshotWorkspace({ dir: link, store }) // walks link/.forkpoint: not the store's path
    expect(viaLinkedRoot.tree).toBe(viaLinkedStore.tree)
  })

  it('skips and reports what is not a file, directory or symlink (a FIFO)', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a' })
    execFileSync('mkfifo', [join(dir, 'pipe')])
    const snap = await snapshotWorkspace({ dir })
    expect(snap.skipped).toEqual(['pipe'])
    expect((await readTree(store, snap.tree)).entries.map((e) => e.name)).toEqual(['a.txt'])
  })

  it('refuses an invalid --tag before taking the snapshot', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a' })
    await expect(snapshotWorkspace({ dir, tag: '../escape' })).rejects.toBeInstanceOf(UsageError)
    expect(await readRef(store, 'HEAD')).toBeNull()
    expect(await countObjects(store)).toBe(0)
  })

  it('sees every file as added before the first snapshot, and an empty workspace as clean', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a', e: { dir: true } })
    expect((await status({ dir })).changes.map((c) => [c.path, c.status])).toEqual([
      ['a.txt', 'added'],
      ['e', 'added'],
    ])
    const empty = await storeWorkspace()
    expect(await status({ dir: empty.dir })).toMatchObject({ clean: true, head: null, headName: 'main' })
  })
})
