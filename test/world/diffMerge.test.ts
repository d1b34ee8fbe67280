import { describe, expect, it } from 'vitest'
import { type Digest, Store, type TreeEntry, diffTrees, listObjects, makeTree, mergeTrees3, readTree, treeSource } from '../../src/index.js'
import { tempDir } from '../helpers/tmp.js'

/** A tree described as a map: 'path': content, { x: content } (executable), { link: target }, { dir: {...} }, {} for an empty dir. */
type Spec = { [name: string]: string | { x: string } | { link: string } | Spec }

async function build(store: Store, spec: Spec): Promise<Digest> {
  const entries: TreeEntry[] = []
  for (const [name, v] of Object.entries(spec)) {
    if (typeof v === 'string') entries.push({ name, type: 'file', mode: 0o644, size: v.length, blob: await store.writeBlob(Buffer.from(v)) })
    else if ('x' in v && typeof v.x === 'string') entries.push({ name, type: 'file', mode: 0o755, size: v.x.length, blob: await store.writeBlob(Buffer.from(v.x)) })
    else if ('link' in v && typeof v.link === 'string') entries.push({ name, type: 'symlink', mode: 0o777, size: v.link.length, target: v.link })
    else entries.push({ name, type: 'dir', mode: 0o755, size: 0, tree: await build(store, v as Spec) })
  }
  return store.writeObject({ ...makeTree(entries) })
}

/** Read a tree back into the same map form, to compare merge results. */
async function read(store: Store, tree: Digest): Promise<Spec> {
  const out: Spec = {}
  for (const e of (await readTree(store, tree)).entries) {
    if (e.type === 'dir') out[e.name] = await read(store, e.tree)
    else if (e.type === 'symlink') out[e.name] = { link: e.target }
    else {
      const text = (await store.readBlob('blob' in e ? e.blob : e.chunks)).toString()
      out[e.name] = e.mode === 0o755 ? { x: text } : text
    }
  }
  return out
}

async function newStore(): Promise<Store> {
  return Store.init(tempDir('store'))
}

describe('diffTrees', () => {
  it('reports added, deleted, modified, mode and typechange, with sizes and link targets', async () => {
    const store = await newStore()
    const a = await build(store, { 'keep.txt': 'same', 'mod.txt': 'old', 'del.txt': 'bye', 'chmod.sh': 'echo', 'ln': { link: 'x' }, 'f2l': 'file', 'retarget': { link: 'a' } })
    const b = await build(store, { 'keep.txt': 'same', 'mod.txt': 'newer', 'add.txt': 'hi', 'chmod.sh': { x: 'echo' }, 'ln': { link: 'x' }, 'f2l': { link: 'file' }, 'retarget': { link: 'b' } })
    const changes = await diffTrees({ source: treeSource(store), a, b })
    expect(changes).toEqual([
      { path: 'add.txt', status: 'added', new: { type: 'file', mode: 0o644, size: 2 } },
      { path: 'chmod.sh', status: 'mode', old: { type: 'file', mode: 0o644, size: 4 }, new: { type: 'file', mode: 0o755, size: 4 } },
      { path: 'del.txt', status: 'deleted', old: { type: 'file', mode: 0o644, size: 3 } },
      { path: 'f2l', status: 'typechange', old: { type: 'file', mode: 0o644, size: 4 }, new: { type: 'symlink', mode: 0o777, size: 4, target: 'file' } },
      { path: 'mod.txt', status: 'modified', old: { type: 'file', mode: 0o644, size: 3 }, new: { type: 'file', mode: 0o644, size: 5 } },
      { path: 'retarget', status: 'modified', old: { type: 'symlink', mode: 0o777, size: 1, target: 'a' }, new: { type: 'symlink', mode: 0o777, size: 1, target: 'b' } },
    ])
    expect(await diffTrees({ source: treeSource(store), a: b, b })).toEqual([])
  })

  it('shows directories through their contents, and empty directories as themselves', async () => {
    const store = await newStore()
    const a = await build(store, { 'gone': { 'x.txt': 'x', 'deep': { 'y.txt': 'y' } }, 'emptied': { 'z.txt': 'z' }, 'was-empty': {}, 'd2f': { 'in.txt': 'i' } })
    const b = await build(store, { 'emptied': {}, 'new-empty': {}, 'came': { 'n.txt': 'n' }, 'd2f': 'now a file' })
    const changes = await diffTrees({ source: treeSource(store), a, b })
    expect(changes.map((c) => [c.path, c.status, c.old?.type ?? c.new?.type])).toEqual([
      ['came/n.txt', 'added', 'file'],
      ['d2f/in.txt', 'deleted', 'file'],
      ['d2f', 'added', 'file'],
      ['emptied/z.txt', 'deleted', 'file'],
      ['gone/deep/y.txt', 'deleted', 'file'],
      ['gone/x.txt', 'deleted', 'file'],
      ['new-empty', 'added', 'dir'],
      ['was-empty', 'deleted', 'dir'],
    ])
  })

  it('treats a missing side as the empty tree', async () => {
    const store = await newStore()
    const b = await build(store, { 'a.txt': 'a', 'e': {} })
    expect((await diffTrees({ source: treeSource(store), a: null, b })).map((c) => [c.path, c.status])).toEqual([
      ['a.txt', 'added'],
      ['e', 'added'],
    ])
  })
})

describe('mergeTrees3', () => {
  const base: Spec = { 'a.txt': 'a', 'b.txt': 'b', 'shared.txt': 's', 'dir': { 'x.txt': 'x', 'y.txt': 'y' } }

  it('merges disjoint changes, including inside nested directories', async () => {
    const store = await newStore()
    const ours = await build(store, { ...base, 'a.txt': 'a ours', 'new-ours.txt': 'o', 'dir': { 'x.txt': 'x ours', 'y.txt': 'y' } })
    const theirs = await build(store, { 'a.txt': 'a', 'shared.txt': 's', 'new-theirs': { 'deep.txt': 'd' }, 'dir': { 'x.txt': 'x', 'y.txt': 'y', 'z.txt': 'z theirs' } })
    const result = await mergeTrees3({ store, source: treeSource(store), base: await build(store, base), ours, theirs })
    if (result.type !== 'merged') throw new Error(`expected a merge, got conflicts ${result.paths}`)
    expect(await read(store, result.tree)).toEqual({
      'a.txt': 'a ours',
      'new-ours.txt': 'o',
      'new-theirs': { 'deep.txt': 'd' },
      'shared.txt': 's',
      'dir': { 'x.txt': 'x ours', 'y.txt': 'y', 'z.txt': 'z theirs' },
    })
  })

  it('takes the same change on both sides once, and returns a side unchanged when the other did nothing', async () => {
    const store = await newStore()
    const b = await build(store, base)
    const both = await build(store, { ...base, 'a.txt': 'same edit', 'added.txt': 'same add', 'b.txt': { x: 'b' } })
    const same = await mergeTrees3({ store, source: treeSource(store), base: b, ours: both, theirs: both })
    expect(same).toEqual({ type: 'merged', tree: both })
    const onlyOurs = await mergeTrees3({ store, source: treeSource(store), base: b, ours: both, theirs: b })
    expect(onlyOurs).toEqual({ type: 'merged', tree: both })
    const onlyTheirs = await mergeTrees3({ store, source: treeSource(store), base: b, ours: b, theirs: both })
    expect(onlyTheirs).toEqual({ type: 'merged', tree: both })

    const theirs = await build(store, { ...base, 'a.txt': 'same edit', 'added.txt': 'same add', 'b.txt': { x: 'b' }, 'shared.txt': 'theirs only' })
    const merged = await mergeTrees3({ store, source: treeSource(store), base: b, ours: both, theirs })
    if (merged.type !== 'merged') throw new Error('expected a merge')
    expect(await read(store, merged.tree)).toEqual({ ...base, 'a.txt': 'same edit', 'added.txt': 'same add', 'b.txt': { x: 'b' }, 'shared.txt': 'theirs only' })
  })

  it('lists every path both sides changed differently, and writes nothing', async () => {
    const store = await newStore()
    const b = await build(store, base)
    const ours = await build(store, { ...base, 'a.txt': 'ours', 'b.txt': { x: 'b' }, 'dir': { 'x.txt': 'x ours', 'y.txt': 'y' }, 'both-added': 'o' })
    const theirs = await build(store, { 'a.txt': 'theirs', 'b.txt': 'b changed', 'dir': { 'x.txt': 'x theirs' }, 'both-added': 't' })
    const before = (await listObjects(store)).length
    const result = await mergeTrees3({ store, source: treeSource(store), base: b, ours, theirs })
    expect(result).toEqual({ type: 'conflict', paths: ['a.txt', 'b.txt', 'both-added', 'dir/x.txt'] })
    expect((await listObjects(store)).length).toBe(before)
  })

  it('conflicts on delete vs modify, and merges both sides adding different files to a new directory', async () => {
    const store = await newStore()
    const b = await build(store, base)
    const ours = await build(store, { ...base, 'shared.txt': 'edited', 'newdir': { 'o.txt': 'o' } })
    const theirs = await build(store, { 'a.txt': 'a', 'b.txt': 'b', 'dir': base['dir'] as Spec, 'newdir': { 't.txt': 't' } })
    expect(await mergeTrees3({ store, source: treeSource(store), base: b, ours, theirs })).toEqual({ type: 'conflict', paths: ['shared.txt'] })
    const ours2 = await build(store, { ...base, 'newdir': { 'o.txt': 'o' } })
    const merged = await mergeTrees3({ store, source: treeSource(store), base: b, ours: ours2, theirs })
    if (merged.type !== 'merged') throw new Error('expected a merge')
    expect(await read(store, merged.tree)).toEqual({ 'a.txt': 'a', 'b.txt': 'b', 'dir': base['dir'], 'newdir': { 'o.txt': 'o', 't.txt': 't' } })
  })
})
