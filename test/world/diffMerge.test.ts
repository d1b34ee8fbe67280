import { describe, expect, it } from 'vitest'
import { type Digest, Store, type TreeEntry } from '../../src/index.js'
import { diffTrees } from '../../src/world/diff/diffTrees.js'
import { makeTree } from '../../src/objects/Tree.js'
import { treeSource } from '../../src/world/tree/treeSource.js'
import { tempDir } from '../helpers/tmp.js'

/** A tree described as a map: 'path': content, { x: content } (executable), { link: target }, { dir: {...} }, {} for an empty dir. */
type Spec = { [name: string]: string | { x: string } | { link: string } | Spec }

async function build(store: Store, spec: Spec): Promise<Digest> {
  const entries: TreeEntry[] = []
  for (const [name, v] of Object.entries(spec)) {
    if (typeof v === 'string') entries.push({ name, type: 'file', mode: 0o644, size: v.length, blob: await store.writeBlob(Buffer.from(v)) })
    else if ('x' in v && typeof v.x === 'string') entries.push({ name, type: 'file', mode: 0o755, size: v.x.length, blob: await store.writeBlob(Buffer.from(v.x)) })
    else if ('link' in v && typeof v.link === 'string') entries.push({ name, type: 'symlink', mode: 0o777, size: v.link.length, target: v.link })
    else entries.push({ name, type: 'dir', mode: 0o755, size: 0, tree: await build(store, v) })
  }
  return store.writeObject({ ...makeTree(entries) })
}

async function newStore(): Promise<Store> {
  return Store.init(tempDir('store'))
}

describe('diffTrees', () => {
  it('reports added, deleted, modified, mode and typechange, with sizes and link targets', async () => {
    const store = await newStore()
    const a = await build(store, { 'keep.txt': 'same', 'mod.txt': 'old', 'del.txt': 'bye', 'chmod.sh': 'echo', ln: { link: 'x' }, f2l: 'file', retarget: { link: 'a' } })
    const b = await build(store, {
      'keep.txt': 'same',
      'mod.txt': 'newer',
      'add.txt': 'hi',
      'chmod.sh': { x: 'echo' },
      ln: { link: 'x' },
      f2l: { link: 'file' },
      retarget: { link: 'b' },
    })
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
    const a = await build(store, { gone: { 'x.txt': 'x', deep: { 'y.txt': 'y' } }, emptied: { 'z.txt': 'z' }, 'was-empty': {}, d2f: { 'in.txt': 'i' } })
    const b = await build(store, { emptied: {}, 'new-empty': {}, came: { 'n.txt': 'n' }, d2f: 'now a file' })
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
    const b = await build(store, { 'a.txt': 'a', e: {} })
    expect((await diffTrees({ source: treeSource(store), a: null, b })).map((c) => [c.path, c.status])).toEqual([
      ['a.txt', 'added'],
      ['e', 'added'],
    ])
  })
})
