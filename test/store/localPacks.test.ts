import { existsSync, promises as fs, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type Store, checkout, gc, snapshotWorkspace, verify } from '../../src/index.js'
import { makeSnapshot } from '../../src/objects/Snapshot.js'
import { sha256 } from '../../src/objects/digest.js'
import { listObjects } from '../../src/store/objectGraph.js'
import { readRef, updateRef } from '../../src/store/refs.js'
import { PACK_MIN_OBJECTS } from '../../src/world/scan/scanWorkspace.js'
import { LIB, runNode } from '../helpers/cli.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'
import { randomFiles, treeListing } from '../registry/fixtures.js'

const packFiles = (store: Store) => (existsSync(store.packs.dir) ? readdirSync(store.packs.dir).sort() : [])
/** More files than a snapshot writes one by one, over 2 MiB in all: a pack of a few frames. */
const manyFiles = (seed: number) => randomFiles(PACK_MIN_OBJECTS + 100, 2000, seed)
const TREES = 8 // the root and its seven directories (randomFiles)
const hoursAgo = (hours: number) => new Date(Date.now() - hours * 60 * 60 * 1000)

async function checkedOut(store: Store, id: `sha256:${string}`): Promise<Record<string, string>> {
  const into = join(tempDir('out'), 'ws')
  await checkout({ store, id, into })
  return treeListing(into)
}

describe("a cold snapshot's own pack", () => {
  it('holds its blobs and trees in one pack, not a file each; checkout and verify read them', async () => {
    const files = manyFiles(1)
    const { dir, store } = await storeWorkspace(files)
    const snap = await snapshotWorkspace({ dir })
    expect(packFiles(store).map((n) => n.slice(64))).toEqual(['.idx', '.pack'])
    expect(await listObjects(store)).toEqual([snap.id]) // only the snapshot object has a file
    expect(await checkedOut(store, snap.id)).toEqual(await treeListing(dir))
    expect(await verify({ store })).toEqual({ ok: true, checked: Object.keys(files).length + TREES + 1, problems: [] })
  })

  it('a snapshot of a few changes on top writes files of their own, beside the pack', async () => {
    const { dir, store } = await storeWorkspace(manyFiles(2))
    await snapshotWorkspace({ dir })
    await fs.writeFile(join(dir, 'dir0/file0.bin'), 'changed')
    const next = await snapshotWorkspace({ dir })
    expect(packFiles(store)).toHaveLength(2)
    expect(await listObjects(store)).toContain(sha256('changed'))
    expect(await checkedOut(store, next.id)).toEqual(await treeListing(dir))
  })

  it('gc keeps a pack all of whose objects live, and drops one partly dead after writing out what lives', async () => {
    const { dir, store } = await storeWorkspace(manyFiles(3))
    const first = await snapshotWorkspace({ dir })
    expect((await gc({ store, prune: 'now' })).removed).toEqual([])
    expect(packFiles(store)).toHaveLength(2)
    // half the files go; a snapshot with no parent takes HEAD's place, so the first snapshot and what only it holds die
    for (let i = 0; i < PACK_MIN_OBJECTS; i += 2) await fs.rm(join(dir, `dir${i % 7}/file${i}.bin`))
    const second = await snapshotWorkspace({ dir })
    const root = await store.writeObject(makeSnapshot({ parents: [], tree: second.tree, message: 'root' }))
    await updateRef({ store, name: 'refs/heads/main', id: root, expected: second.id, message: 'test' })
    const swept = await gc({ store, prune: 'now', now: new Date(Date.now() + 60_000) }) // every reflog entry older than the clock, even one of this very millisecond
    expect(swept.removed).toContain(first.id)
    expect(swept.removed).toContain(sha256(manyFiles(3)['dir0/file0.bin']!))
    expect(packFiles(store)).toEqual([])
    expect(await verify({ store })).toMatchObject({ ok: true })
    expect(await checkedOut(store, root)).toEqual(await treeListing(dir))
  })
})

/**
 * Snapshot `dir` in a child process that kills itself with SIGKILL (a real crash: no catch,
 * no finally) while writing the pack: after its second frame, or just before its index
 * is moved into place (the pack itself is).
 */
async function snapshotUntilCrash(dir: string, point: 'mid-pack' | 'before-index'): Promise<void> {
  const script = join(tempDir('crasher'), 'crash.mjs')
  await fs.writeFile(
    script,
    `
import fs from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
const [lib, dir, point] = process.argv.slice(2)
const { openSync, writeSync, renameSync } = fs
let packFd = -1
let frames = 0
fs.openSync = (path, ...rest) => {
  const fd = openSync(path, ...rest)
  if (/\\/tmp\\/\\.pack\\.tmp-/.test(String(path))) packFd = fd
  return fd
}
fs.writeSync = (fd, ...rest) => {
  const n = writeSync(fd, ...rest)
  if (point === 'mid-pack' && fd === packFd && ++frames === 2) process.kill(process.pid, 'SIGKILL')
  return n
}
fs.renameSync = (from, to) => {
  if (point === 'before-index' && String(to).endsWith('.idx')) process.kill(process.pid, 'SIGKILL')
  return renameSync(from, to)
}
syncBuiltinESMExports()
const api = await import(lib)
await api.snapshotWorkspace({ dir })
console.log('finished without crashing')
`,
  )
  const r = await runNode([script, LIB, dir, point], { cwd: dir })
  expect(r.stdout).not.toContain('finished without crashing')
  expect(r.code).not.toBe(0)
}

describe('a crash while a snapshot writes its pack', () => {
  it('in the middle of the pack leaves a temp file no reader sees and gc removes; the store verifies and snapshots again', async () => {
    const files = manyFiles(4)
    const { dir, store } = await storeWorkspace(files)
    await snapshotUntilCrash(dir, 'mid-pack')
    const temps = readdirSync(store.path('tmp')).filter((n) => n.startsWith('.pack.tmp-'))
    expect(temps).toHaveLength(1)
    expect(await readRef(store, 'HEAD')).toBeNull()
    expect(packFiles(store)).toEqual([])
    expect(await verify({ store })).toEqual({ ok: true, checked: 0, problems: [] })
    const leftover = store.path('tmp', temps[0]!)
    await fs.utimes(leftover, hoursAgo(2), hoursAgo(2))
    await gc({ store })
    expect(existsSync(leftover)).toBe(false)
    const snap = await snapshotWorkspace({ dir })
    expect(await checkedOut(store, snap.id)).toEqual(await treeListing(dir))
    expect(await verify({ store })).toMatchObject({ ok: true, checked: Object.keys(files).length + TREES + 1 })
  })

  it('between the pack and its index leaves a pack no reader looks at, which gc removes once old; the store verifies and snapshots again', async () => {
    const files = manyFiles(5)
    const { dir, store } = await storeWorkspace(files)
    await snapshotUntilCrash(dir, 'before-index')
    const orphans = packFiles(store)
    expect(orphans.map((n) => n.slice(64))).toEqual(['.pack'])
    expect(await readRef(store, 'HEAD')).toBeNull()
    expect(await store.has(sha256(files['dir0/file0.bin']!))).toBe(false)
    expect(await verify({ store })).toEqual({ ok: true, checked: 0, problems: [] })
    await gc({ store }) // a writer may still be between the two: kept while young
    expect(packFiles(store)).toEqual(orphans)
    await fs.utimes(join(store.packs.dir, orphans[0]!), hoursAgo(2), hoursAgo(2))
    await gc({ store })
    expect(packFiles(store)).toEqual([])
    const snap = await snapshotWorkspace({ dir })
    expect(await checkedOut(store, snap.id)).toEqual(await treeListing(dir))
    expect(await verify({ store })).toMatchObject({ ok: true, checked: Object.keys(files).length + TREES + 1 })
  })
})
