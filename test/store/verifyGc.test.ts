import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DigestMismatchError, StoreCorruptError, type Digest, checkout, gc, snapshotWorkspace, verify } from '../../src/index.js'
import { listObjects } from '../../src/store/objectGraph.js'
import { makeSnapshot } from '../../src/objects/Snapshot.js'
import { readSnapshot, readTree } from '../../src/world/tree/readObjects.js'
import { sha256 } from '../../src/objects/digest.js'
import { updateRef } from '../../src/store/refs.js'
import { tempDir } from '../helpers/tmp.js'
import { countObjects, storeWorkspace } from '../helpers/workspace.js'

describe('verify', () => {
  it('is clean on a healthy store', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a', 'd/b.txt': 'b' })
    await snapshotWorkspace({ dir })
    expect(await verify({ store })).toEqual({ ok: true, checked: await countObjects(store), problems: [] })
  })

  it('reports a corrupt object (and a read of it fails with DigestMismatchError)', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'precious', 'b.txt': 'other' })
    await snapshotWorkspace({ dir })
    const blob = sha256('precious')
    await fs.writeFile(store.objectPath(blob), 'tampered')
    const result = await verify({ store })
    expect(result.ok).toBe(false)
    expect(result.problems).toEqual([{ type: 'corrupt', digest: blob, actual: sha256('tampered') }])
    await expect(store.readBlob(blob)).rejects.toBeInstanceOf(DigestMismatchError)
  })

  it('reports a missing object with what referenced it', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a', 'd/b.txt': 'lost' })
    const snap = await snapshotWorkspace({ dir })
    const root = await readTree(store, (await readSnapshot(store, snap.id)).world.tree)
    const sub = root.entries.find((e) => e.name === 'd')
    if (sub?.type !== 'dir') throw new Error('d is a dir')
    await fs.rm(store.objectPath(sha256('lost')))
    expect(await verify({ store })).toMatchObject({ ok: false, problems: [{ type: 'missing', digest: sha256('lost'), referencedBy: sub.tree }] })
  })

  it('reports a ref pointing at a missing object', async () => {
    const { store } = await storeWorkspace()
    const ghost = sha256('never written')
    await updateRef({ store, name: 'refs/heads/ghost', id: ghost, message: 'x' })
    expect(await verify({ store })).toMatchObject({ ok: false, problems: [{ type: 'missing', digest: ghost, referencedBy: 'root' }] })
  })
})

describe('gc', () => {
  it('removes only what no ref or reflog reaches', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'v1' })
    const s1 = await snapshotWorkspace({ dir })
    await fs.writeFile(join(dir, 'a.txt'), 'v2')
    const s2 = await snapshotWorkspace({ dir })
    const garbage = await store.writeBlob(Buffer.from('nobody points here'))
    const orphanTree = await store.writeObject({ kind: 'tree', schemaVersion: 1, entries: [] })
    const orphanSnap = await store.writeObject(makeSnapshot({ parents: [], tree: orphanTree, message: 'orphan' }))
    const before = await countObjects(store)

    const dry = await gc({ store, dryRun: true })
    expect(dry.removed.sort()).toEqual([garbage, orphanSnap, orphanTree].sort())
    expect(await countObjects(store)).toBe(before)

    const result = await gc({ store })
    expect(result.removed.sort()).toEqual([garbage, orphanSnap, orphanTree].sort())
    expect(result.freedBytes).toBeGreaterThan(0)
    expect(await countObjects(store)).toBe(before - 3)
    expect(await store.has(garbage)).toBe(false)
    // s1 is only in the reflog now (main moved to s2): still kept, still checks out.
    for (const id of [s1.id, s2.id]) {
      const into = join(tempDir('gc'), 'out')
      await checkout({ dir, id, into })
      expect(await fs.readFile(join(into, 'a.txt'), 'utf8')).toBe(id === s1.id ? 'v1' : 'v2')
    }
    expect((await verify({ store })).ok).toBe(true)
    expect((await gc({ store })).removed).toEqual([])
  })

  it('keeps chunks of a chunked file and everything a tag reaches', async () => {
    const { dir, store } = await storeWorkspace()
    await fs.writeFile(join(dir, 'big.bin'), Buffer.alloc(9 * 1024 * 1024, 7))
    await snapshotWorkspace({ dir, tag: 'big' })
    const objects = new Set<Digest>(await listObjects(store))
    expect((await gc({ store })).removed).toEqual([])
    expect(new Set(await listObjects(store))).toEqual(objects)
    expect((await verify({ store })).ok).toBe(true)
  })

  for (const damage of ['a corrupt tree', 'a missing tree'] as const) {
    it(`refuses to run on a store with ${damage} (StoreCorruptError, exit 5) rather than drop what it named`, async () => {
      const { dir, store } = await storeWorkspace({ 'd/inner.txt': 'only this tree names me', 'top.txt': 't' })
      const snap = await snapshotWorkspace({ dir })
      const root = await readTree(store, (await readSnapshot(store, snap.id)).world.tree)
      const sub = root.entries.find((e) => e.name === 'd')
      if (sub?.type !== 'dir') throw new Error('d is a dir')
      if (damage === 'a corrupt tree') await fs.writeFile(store.objectPath(sub.tree), '{"kind":"tree","schemaVersion":1,"entries":[]}')
      else await fs.rm(store.objectPath(sub.tree))
      const garbage = await store.writeBlob(Buffer.from('garbage'))

      const err = await gc({ store }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(StoreCorruptError)
      expect((err as StoreCorruptError).exitCode).toBe(5)
      expect(await store.has(sha256('only this tree names me'))).toBe(true)
      expect(await store.has(garbage)).toBe(true) // nothing at all was removed
    })
  }

  it('drops the stat cache when it removed objects, so it never vouches for a removed blob', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a' })
    await snapshotWorkspace({ dir })
    await store.writeBlob(Buffer.from('garbage'))
    await fs.writeFile(store.path('index'), '{}')
    await gc({ store })
    await expect(fs.stat(store.path('index'))).rejects.toThrow(/ENOENT/)
  })

  it("removes a crashed writer's half-written object temp after an hour, and nothing a live writer may still be using", async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a' })
    const snap = await snapshotWorkspace({ dir })
    const shard = join(store.objectPath(snap.id), '..')
    const stale = join(shard, '.half-written.tmp-1-abc-0')
    const fresh = join(shard, '.being-written.tmp-2-def-0')
    await fs.writeFile(stale, 'partial')
    await fs.writeFile(fresh, 'partial')
    const hourAgo = new Date(Date.now() - 2 * 60 * 60 * 1000)
    await fs.utimes(stale, hourAgo, hourAgo)
    expect((await verify({ store })).ok).toBe(true) // temps are not objects: not reported
    await gc({ store })
    await expect(fs.stat(stale)).rejects.toThrow(/ENOENT/)
    expect((await fs.stat(fresh)).isFile()).toBe(true)
    expect(await listObjects(store)).toContain(snap.id)
  })
})
