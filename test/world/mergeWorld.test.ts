import { describe, expect, it } from 'vitest'
import { type Digest, Store, type TreeEntry } from '../../src/index.js'
import { readTree } from '../../src/world/tree/readObjects.js'
import { dirEntry, fileEntry, symlinkEntry, treeObject } from '../../src/objects/Tree.js'
import { type PathConflict, mergeWorld } from '../../src/world/merge/mergeWorld.js'
import { tempDir } from '../helpers/tmp.js'

/** A flat description of a tree: path -> file text (`x:` prefix = executable), `-> target` (symlink), or null (a directory). */
type Flat = Record<string, string | null>

async function write(store: Store, flat: Flat, prefix = ''): Promise<Digest> {
  const names = new Set(
    Object.keys(flat)
      .filter((p) => p.startsWith(prefix))
      .map((p) => p.slice(prefix.length).split('/')[0]!),
  )
  const entries: TreeEntry[] = []
  for (const name of names) {
    const path = prefix + name
    const spec = flat[path]
    if (spec === undefined || spec === null) entries.push(dirEntry(name, await write(store, flat, `${path}/`)))
    else if (spec.startsWith('-> ')) entries.push(symlinkEntry(name, spec.slice(3)))
    else {
      const text = spec.startsWith('x:') ? spec.slice(2) : spec
      entries.push(fileEntry(name, spec.startsWith('x:'), Buffer.byteLength(text), await store.writeBlob(Buffer.from(text)), false))
    }
  }
  const { digest, bytes } = treeObject(entries)
  await store.writeVerified(digest, bytes)
  return digest
}

async function read(store: Store, tree: Digest, prefix = ''): Promise<Flat> {
  const flat: Flat = {}
  for (const e of (await readTree(store, tree)).entries) {
    const path = prefix + e.name
    if (e.type === 'dir') Object.assign(flat, { [path]: null }, await read(store, e.tree, `${path}/`))
    else if (e.type === 'symlink') flat[path] = `-> ${e.target}`
    else flat[path] = (e.mode === 0o755 ? 'x:' : '') + (await store.readBlob((e as { blob: Digest }).blob)).toString()
  }
  return flat
}

const BASE = '1\n2\n3\n4\n5\n'
/** What each side may do to the base's file `p`. Ours edits line 1, theirs line 5, so two edits merge. */
const actions = {
  keep: () => ({ p: BASE }),
  modify: (side: 'ours' | 'theirs') => ({ p: side === 'ours' ? BASE.replace('1', 'one') : BASE.replace('5', 'five') }),
  delete: () => ({}),
  mode: () => ({ p: `x:${BASE}` }),
  symlink: () => ({ p: '-> target' }),
  dir: () => ({ p: null, 'p/inner': 'in\n' }),
} satisfies Record<string, (side: 'ours' | 'theirs') => Flat>
type Action = keyof typeof actions

const labels = { ours: 'ours', base: 'base', theirs: 'theirs' }

async function mergeOf(oursDoes: Action, theirsDo: Action): Promise<{ tree: Flat; conflicts: PathConflict[] }> {
  const store = await Store.init(tempDir('merge-world'))
  const [base, ours, theirs] = await Promise.all([{ p: BASE }, actions[oursDoes]('ours'), actions[theirsDo]('theirs')].map((f) => write(store, { other: 'same\n', ...f })))
  const result = await mergeWorld({ store, base: base!, ours: ours!, theirs: theirs!, labels })
  const tree = await read(store, result.tree)
  delete tree.other
  return { tree, conflicts: result.conflicts }
}

const none: PathConflict[] = []
const conflict = (kind: PathConflict['kind'], ours: string | null, theirs: string | null): PathConflict[] => [{ path: 'p', kind, kept: { ours, theirs } }]

/** Every ordered pair of actions (ours does the first, theirs the second) with the merge expected. */
const table: Array<[Action, Action, Flat, PathConflict[]]> = [
  ['keep', 'keep', { p: BASE }, none],
  ['keep', 'modify', { p: BASE.replace('5', 'five') }, none],
  ['keep', 'delete', {}, none],
  ['keep', 'mode', { p: `x:${BASE}` }, none],
  ['keep', 'symlink', { p: '-> target' }, none],
  ['keep', 'dir', { p: null, 'p/inner': 'in\n' }, none],
  ['modify', 'modify', { p: 'one\n2\n3\n4\nfive\n' }, none],
  ['modify', 'delete', { p: BASE.replace('1', 'one') }, conflict('modify/delete', 'p', null)],
  ['modify', 'mode', { p: `x:${BASE.replace('1', 'one')}` }, none],
  ['modify', 'symlink', { p: BASE.replace('1', 'one'), 'p~theirs': '-> target' }, conflict('type', 'p', 'p~theirs')],
  ['modify', 'dir', { p: null, 'p/inner': 'in\n', 'p~ours': BASE.replace('1', 'one') }, conflict('type', 'p~ours', 'p')],
  ['delete', 'delete', {}, none],
  ['delete', 'mode', { p: `x:${BASE}` }, conflict('modify/delete', null, 'p')],
  ['delete', 'symlink', { p: '-> target' }, conflict('modify/delete', null, 'p')],
  ['delete', 'dir', { p: null, 'p/inner': 'in\n' }, conflict('modify/delete', null, 'p')],
  ['mode', 'mode', { p: `x:${BASE}` }, none],
  ['mode', 'symlink', { p: `x:${BASE}`, 'p~theirs': '-> target' }, conflict('type', 'p', 'p~theirs')],
  ['mode', 'dir', { p: null, 'p/inner': 'in\n', 'p~ours': `x:${BASE}` }, conflict('type', 'p~ours', 'p')],
  ['symlink', 'symlink', { p: '-> target' }, none],
  ['symlink', 'dir', { p: null, 'p/inner': 'in\n', 'p~ours': '-> target' }, conflict('type', 'p~ours', 'p')],
  ['dir', 'dir', { p: null, 'p/inner': 'in\n' }, none],
  // the same pairs the other way round
  ['modify', 'keep', { p: BASE.replace('1', 'one') }, none],
  ['delete', 'keep', {}, none],
  ['mode', 'keep', { p: `x:${BASE}` }, none],
  ['symlink', 'keep', { p: '-> target' }, none],
  ['dir', 'keep', { p: null, 'p/inner': 'in\n' }, none],
  ['delete', 'modify', { p: BASE.replace('5', 'five') }, conflict('modify/delete', null, 'p')],
  ['mode', 'modify', { p: `x:${BASE.replace('5', 'five')}` }, none],
  ['symlink', 'modify', { p: '-> target', 'p~theirs': BASE.replace('5', 'five') }, conflict('type', 'p', 'p~theirs')],
  ['dir', 'modify', { p: null, 'p/inner': 'in\n', 'p~theirs': BASE.replace('5', 'five') }, conflict('type', 'p', 'p~theirs')],
  ['mode', 'delete', { p: `x:${BASE}` }, conflict('modify/delete', 'p', null)],
  ['symlink', 'delete', { p: '-> target' }, conflict('modify/delete', 'p', null)],
  ['dir', 'delete', { p: null, 'p/inner': 'in\n' }, conflict('modify/delete', 'p', null)],
  ['symlink', 'mode', { p: '-> target', 'p~theirs': `x:${BASE}` }, conflict('type', 'p', 'p~theirs')],
  ['dir', 'mode', { p: null, 'p/inner': 'in\n', 'p~theirs': `x:${BASE}` }, conflict('type', 'p', 'p~theirs')],
  ['dir', 'symlink', { p: null, 'p/inner': 'in\n', 'p~theirs': '-> target' }, conflict('type', 'p', 'p~theirs')],
]

describe('mergeWorld: every pair of changes to one path', () => {
  for (const [o, t, tree, conflicts] of table) {
    it(`ours ${o}, theirs ${t}`, async () => {
      expect(await mergeOf(o, t)).toEqual({ tree, conflicts })
    })
  }
})

describe('mergeWorld', () => {
  it('writes git-style conflict markers where both sides changed the same lines, and keeps both binary versions', async () => {
    const store = await Store.init(tempDir('merge-world'))
    const base = await write(store, { 'a.txt': 'x\ny\n', 'bin.dat': 'v1\0' })
    const ours = await write(store, { 'a.txt': 'x\nmine\n', 'bin.dat': 'v2\0' })
    const theirs = await write(store, { 'a.txt': 'x\nyours\n', 'bin.dat': 'v3\0' })
    const result = await mergeWorld({ store, base, ours, theirs, labels: { ours: 'HEAD', base: 'base', theirs: 'attempt' } })
    expect(await read(store, result.tree)).toEqual({
      'a.txt': 'x\n<<<<<<< HEAD\nmine\n||||||| base\ny\n=======\nyours\n>>>>>>> attempt\n',
      'bin.dat': 'v2\0',
      'bin.dat~attempt': 'v3\0',
    })
    expect(result.conflicts).toEqual([
      { path: 'a.txt', kind: 'content', kept: { ours: 'a.txt', theirs: 'a.txt' } },
      { path: 'bin.dat', kind: 'content', kept: { ours: 'bin.dat', theirs: 'bin.dat~attempt' } },
    ])
  })

  it('merges files added on both sides line by line against an empty base, and never overwrites a name it keeps a version under', async () => {
    const store = await Store.init(tempDir('merge-world'))
    const base = await write(store, {})
    const ours = await write(store, { 'new.txt': 'a\n', link: '-> one', 'link~theirs': 'taken\n' })
    const theirs = await write(store, { 'new.txt': 'b\n', link: '-> two' })
    const result = await mergeWorld({ store, base, ours, theirs, labels })
    const tree = await read(store, result.tree)
    expect(tree).toEqual({ 'new.txt': '<<<<<<< ours\na\n||||||| base\n=======\nb\n>>>>>>> theirs\n', link: '-> one', 'link~theirs': 'taken\n', 'link~theirs~2': '-> two' })
    expect(result.conflicts.map((c) => [c.path, c.kind])).toEqual([
      ['link', 'add/add'],
      ['new.txt', 'add/add'],
    ])
  })

  it('merges inside a directory one side deleted: untouched files go, changed ones are kept as modify/delete', async () => {
    const store = await Store.init(tempDir('merge-world'))
    const base = await write(store, { 'd/a': 'a\n', 'd/b': 'b\n' })
    const ours = await write(store, {})
    const theirs = await write(store, { 'd/a': 'a\n', 'd/b': 'B\n' })
    const result = await mergeWorld({ store, base, ours, theirs, labels })
    expect(await read(store, result.tree)).toEqual({ d: null, 'd/b': 'B\n' })
    expect(result.conflicts).toEqual([{ path: 'd/b', kind: 'modify/delete', kept: { ours: null, theirs: 'd/b' } }])
  })
})

/** What each side may add where the base has nothing (`same`: both add the same bytes). */
const adds = {
  none: () => ({}),
  file: (side: string) => ({ p: `${side}\n` }),
  same: () => ({ p: 'same\n' }),
  exec: (side: string) => ({ p: `x:${side}\n` }),
  symlink: (side: string) => ({ p: `-> ${side}` }),
  dir: (side: string) => ({ p: null, 'p/inner': `${side}\n` }),
} satisfies Record<string, (side: string) => Flat>
type Add = keyof typeof adds

const both = (mode = '') => ({ p: `${mode}<<<<<<< ours\nours\n||||||| base\n=======\ntheirs\n>>>>>>> theirs\n` })
const addAdd = (path = 'p'): PathConflict[] => [{ path, kind: 'add/add', kept: { ours: path, theirs: path } }]

/** Every pair of additions of one path the base lacks (ours adds the first, theirs the second). */
const addTable: Array<[Add, Add, Flat, PathConflict[]]> = [
  ['none', 'none', {}, none],
  ['none', 'file', { p: 'theirs\n' }, none],
  ['none', 'exec', { p: 'x:theirs\n' }, none],
  ['none', 'symlink', { p: '-> theirs' }, none],
  ['none', 'dir', { p: null, 'p/inner': 'theirs\n' }, none],
  ['file', 'none', { p: 'ours\n' }, none],
  ['file', 'file', both(), addAdd()],
  ['same', 'same', { p: 'same\n' }, none],
  ['file', 'exec', { p: 'ours\n', 'p~theirs': 'x:theirs\n' }, conflict('mode', 'p', 'p~theirs')],
  ['file', 'symlink', { p: 'ours\n', 'p~theirs': '-> theirs' }, conflict('type', 'p', 'p~theirs')],
  ['file', 'dir', { p: null, 'p/inner': 'theirs\n', 'p~ours': 'ours\n' }, conflict('type', 'p~ours', 'p')],
  ['exec', 'exec', both('x:'), addAdd()],
  ['exec', 'symlink', { p: 'x:ours\n', 'p~theirs': '-> theirs' }, conflict('type', 'p', 'p~theirs')],
  ['exec', 'dir', { p: null, 'p/inner': 'theirs\n', 'p~ours': 'x:ours\n' }, conflict('type', 'p~ours', 'p')],
  ['symlink', 'symlink', { p: '-> ours', 'p~theirs': '-> theirs' }, [{ path: 'p', kind: 'add/add', kept: { ours: 'p', theirs: 'p~theirs' } }]],
  ['symlink', 'dir', { p: null, 'p/inner': 'theirs\n', 'p~ours': '-> ours' }, conflict('type', 'p~ours', 'p')],
  ['dir', 'dir', { p: null, 'p/inner': both().p }, addAdd('p/inner')],
  // the same pairs the other way round
  ['exec', 'none', { p: 'x:ours\n' }, none],
  ['symlink', 'none', { p: '-> ours' }, none],
  ['dir', 'none', { p: null, 'p/inner': 'ours\n' }, none],
  ['exec', 'file', { p: 'x:ours\n', 'p~theirs': 'theirs\n' }, conflict('mode', 'p', 'p~theirs')],
  ['symlink', 'file', { p: '-> ours', 'p~theirs': 'theirs\n' }, conflict('type', 'p', 'p~theirs')],
  ['symlink', 'exec', { p: '-> ours', 'p~theirs': 'x:theirs\n' }, conflict('type', 'p', 'p~theirs')],
  ['dir', 'file', { p: null, 'p/inner': 'ours\n', 'p~theirs': 'theirs\n' }, conflict('type', 'p', 'p~theirs')],
  ['dir', 'exec', { p: null, 'p/inner': 'ours\n', 'p~theirs': 'x:theirs\n' }, conflict('type', 'p', 'p~theirs')],
  ['dir', 'symlink', { p: null, 'p/inner': 'ours\n', 'p~theirs': '-> theirs' }, conflict('type', 'p', 'p~theirs')],
]

describe('mergeWorld: every pair of additions of one path', () => {
  for (const [o, t, tree, conflicts] of addTable) {
    it(`ours adds ${o}, theirs adds ${t}`, async () => {
      const store = await Store.init(tempDir('merge-world'))
      const [base, ours, theirs] = await Promise.all([{}, adds[o]('ours'), adds[t]('theirs')].map((f) => write(store, { other: 'same\n', ...f })))
      const result = await mergeWorld({ store, base: base!, ours: ours!, theirs: theirs!, labels })
      const merged = await read(store, result.tree)
      delete merged.other
      expect({ tree: merged, conflicts: result.conflicts }).toEqual({ tree, conflicts })
    })
  }

  it('keeps both targets of a symlink both sides pointed elsewhere', async () => {
    const store = await Store.init(tempDir('merge-world'))
    const [base, ours, theirs] = await Promise.all([{ p: '-> base' }, { p: '-> ours' }, { p: '-> theirs' }].map((f) => write(store, f)))
    const result = await mergeWorld({ store, base: base!, ours: ours!, theirs: theirs!, labels })
    expect(await read(store, result.tree)).toEqual({ p: '-> ours', 'p~theirs': '-> theirs' })
    expect(result.conflicts).toEqual([{ path: 'p', kind: 'content', kept: { ours: 'p', theirs: 'p~theirs' } }])
  })
})
