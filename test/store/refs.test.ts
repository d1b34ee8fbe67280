import { describe, expect, it } from 'vitest'
import { AmbiguousIdError, ObjectNotFoundError, RefConflictError, Store, UsageError, checkout, createTag, deleteTag, listTags, snapshotWorkspace } from '../../src/index.js'
import { listRefs, readRef, updateRef } from '../../src/store/refs.js'
import { readReflog } from '../../src/store/reflog.js'
import { resolveId } from '../../src/store/resolveId.js'
import { sha256 } from '../../src/objects/digest.js'
import { collidingBlobs } from '../helpers/ids.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'

/** Three snapshots in a row: s0 <- s1 <- s2. */
async function history() {
  const { dir, store } = await storeWorkspace({ 'f.txt': '0' })
  const ids = []
  for (let i = 0; i < 3; i++) {
    await fs.writeFile(join(dir, 'f.txt'), String(i))
    ids.push((await snapshotWorkspace({ dir, message: `s${i}` })).id)
  }
  return { dir, store, ids }
}

describe('resolveId', () => {
  it('resolves full ids, short prefixes (with or without sha256:), HEAD, branches, tags and ~N', async () => {
    const { store, ids } = await history()
    const [s0, s1, s2] = ids as [string, string, string]
    expect(await resolveId(store, s2)).toBe(s2)
    expect(await resolveId(store, s1.slice(7, 19))).toBe(s1)
    expect(await resolveId(store, s1.slice(0, 19))).toBe(s1)
    expect(await resolveId(store, s1.slice(7, 19).toUpperCase())).toBe(s1)
    expect(await resolveId(store, 'HEAD')).toBe(s2)
    expect(await resolveId(store, 'main')).toBe(s2)
    expect(await resolveId(store, 'refs/heads/main')).toBe(s2)
    expect(await resolveId(store, 'HEAD~0')).toBe(s2)
    expect(await resolveId(store, 'HEAD~1')).toBe(s1)
    expect(await resolveId(store, 'main~2')).toBe(s0)
    await createTag({ store, name: 'v1', id: s1 })
    expect(await resolveId(store, 'v1~1')).toBe(s0)
    expect(await resolveId(store, `${s2.slice(7, 15)}~2`)).toBe(s0)
  })

  it('refuses unknown ids, too-deep ~N and an empty HEAD with ObjectNotFoundError (exit 2)', async () => {
    const { store } = await history()
    for (const spec of ['deadbeef', sha256('nothing'), 'no-such-branch', 'HEAD~3', 'abc']) {
      const err = await resolveId(store, spec).catch((e: unknown) => e)
      expect(err, spec).toBeInstanceOf(ObjectNotFoundError)
      expect((err as ObjectNotFoundError).exitCode).toBe(2)
    }
    const empty = await Store.init(tempDir())
    await expect(resolveId(empty, 'HEAD')).rejects.toThrow(/no.*snapshot|nothing/i)
  })

  it('reports an ambiguous prefix with AmbiguousIdError (exit 2) naming the candidates', async () => {
    const store = await Store.init(tempDir())
    const [x, y] = collidingBlobs()
    const dx = await store.writeBlob(Buffer.from(x))
    const dy = await store.writeBlob(Buffer.from(y))
    const prefix = dx.slice(7, 11)
    expect(dy.slice(7, 11)).toBe(prefix)
    const err = await resolveId(store, prefix).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(AmbiguousIdError)
    expect((err as AmbiguousIdError).exitCode).toBe(2)
    expect((err as AmbiguousIdError).message).toMatch(/ambiguous/)
    expect((err as AmbiguousIdError).data['matches'].sort()).toEqual([dx, dy].sort())
    // One more character than they share picks one out.
    let n = 5
    while (dx.slice(7, 7 + n) === dy.slice(7, 7 + n)) n++
    expect(await resolveId(store, dx.slice(7, 7 + n))).toBe(dx)
  })
})

describe('refs', () => {
  it('refuses invalid ref names', async () => {
    const { store, ids } = await history()
    for (const name of ['../escape', 'a..b', 'x.lock', '', 'has space', '.hidden', 'a//b', 'tag/', '-dash']) {
      await expect(createTag({ store, name }), JSON.stringify(name)).rejects.toBeInstanceOf(UsageError)
    }
    for (const name of ['refs/../../etc/passwd', 'refs/heads/../x', 'HEADS', 'other/main']) {
      await expect(updateRef({ store, name, id: ids[0] as `sha256:${string}`, message: 'x' }), name).rejects.toBeInstanceOf(UsageError)
    }
    expect((await listRefs(store)).map((r) => r.name)).toEqual(['refs/heads/main'])
  })

  it('moves a ref with compare-and-swap: RefConflictError when it moved underneath', async () => {
    const { store, ids } = await history()
    const [s0, s1, s2] = ids as [`sha256:${string}`, `sha256:${string}`, `sha256:${string}`]
    await updateRef({ store, name: 'refs/heads/side', id: s0, expected: null, message: 'create' })
    await expect(updateRef({ store, name: 'refs/heads/side', id: s1, expected: null, message: 'again' })).rejects.toBeInstanceOf(RefConflictError)
    await expect(updateRef({ store, name: 'refs/heads/side', id: s1, expected: s2, message: 'stale' })).rejects.toBeInstanceOf(RefConflictError)
    await updateRef({ store, name: 'refs/heads/side', id: s1, expected: s0, message: 'advance' })
    expect(await readRef(store, 'refs/heads/side')).toBe(s1)
  })

  it('records every move in the reflog of the ref and of HEAD', async () => {
    const { store, ids } = await history()
    const branchLog = await readReflog(store, 'refs/heads/main')
    expect(branchLog.map((e) => [e.old, e.new])).toEqual([
      [null, ids[0]],
      [ids[0], ids[1]],
      [ids[1], ids[2]],
    ])
    expect(branchLog.map((e) => e.message)).toEqual(['snapshot: s0', 'snapshot: s1', 'snapshot: s2'])
    expect((await readReflog(store, 'HEAD')).map((e) => e.new)).toEqual(ids)
    await createTag({ store, name: 'v1', id: ids[0]! })
    await createTag({ store, name: 'v1', id: ids[1]!, force: true })
    expect((await readReflog(store, 'refs/tags/v1')).map((e) => [e.old, e.new])).toEqual([
      [null, ids[0]],
      [ids[0], ids[1]],
    ])
  })
})

describe('the HEAD reflog', () => {
  it('records each in-place checkout that moves HEAD, once', async () => {
    const { dir, store, ids } = await history()
    const before = (await readReflog(store, 'HEAD')).length
    await checkout({ dir, id: ids[0]! })
    await checkout({ dir, id: ids[0]! }) // HEAD does not move: nothing to record
    await checkout({ dir, id: 'main' })
    const moves = (await readReflog(store, 'HEAD')).slice(before)
    expect(moves.map((e) => [e.old, e.new, e.message])).toEqual([
      [ids[2], ids[0], 'checkout'],
      [ids[0], ids[2], 'checkout'],
    ])
  })
})

describe('tags', () => {
  it('creates (default HEAD), lists sorted, moves and deletes tags', async () => {
    const { store, ids } = await history()
    expect(await createTag({ store, name: 'zeta' })).toEqual({ name: 'zeta', id: ids[2] })
    await createTag({ store, name: 'alpha', id: ids[0]!.slice(7, 17) })
    await createTag({ store, name: 'nested/beta', id: 'HEAD~1' })
    expect(await listTags({ store })).toEqual([
      { name: 'alpha', id: ids[0] },
      { name: 'nested/beta', id: ids[1] },
      { name: 'zeta', id: ids[2] },
    ])
    await deleteTag({ store, name: 'alpha' })
    expect((await listTags({ store })).map((t) => t.name)).toEqual(['nested/beta', 'zeta'])
    await expect(deleteTag({ store, name: 'alpha' })).rejects.toBeInstanceOf(ObjectNotFoundError)
    await expect(createTag({ store, name: 'bad', id: 'nope-nope' })).rejects.toBeInstanceOf(ObjectNotFoundError)
  })
})
