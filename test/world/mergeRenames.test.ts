import { describe, expect, it } from 'vitest'
import { Store } from '../../src/index.js'
import { mergeWorld } from '../../src/world/merge/mergeWorld.js'
import type { RenameOptions } from '../../src/world/diff/findRenames.js'
import { type FlatFiles, readFlat, writeFlat } from '../helpers/flatTree.js'
import { tempDir } from '../helpers/tmp.js'

const labels = { ours: 'ours', base: 'base', theirs: 'theirs' }
/** Twenty distinct lines of 22 bytes, so that an edit of one or two leaves a file well over half alike. */
const TEXT = Array.from({ length: 20 }, (_, i) => `line ${String(i).padStart(2, '0')} of the module\n`).join('')
const edit = (text: string, from: string, to: string) => text.replace(from, to)

async function mergeOf(base: FlatFiles, ours: FlatFiles, theirs: FlatFiles, renames?: Partial<RenameOptions> | false) {
  const store = await Store.init(tempDir('merge-renames'))
  const [b, o, t] = await Promise.all([base, ours, theirs].map((f) => writeFlat(store, f)))
  const options = renames === false ? false : { threshold: 50, limit: 1000, ...renames }
  const result = await mergeWorld({ store, base: b!, ours: o!, theirs: t!, labels, renames: options })
  return { ...result, files: await readFlat(store, result.tree) }
}

describe('mergeWorld: renames', () => {
  it('applies an edit of one side at the path the other side renamed the file to', async () => {
    const edited = edit(TEXT, 'line 03 ', 'line THREE ')
    const r = await mergeOf({ 'a.txt': TEXT, 'keep.txt': 'k\n' }, { 'src/b.txt': TEXT, 'keep.txt': 'k\n' }, { 'a.txt': edited, 'keep.txt': 'k\n' })
    expect(r.conflicts).toEqual([])
    expect(r.files).toEqual({ 'src/b.txt': edited, 'keep.txt': 'k\n' })
    expect(r.renames).toEqual([{ side: 'ours', from: 'a.txt', to: 'src/b.txt', score: 100 }])
  })

  it('merges line by line a file renamed with edits on one side and edited on the other', async () => {
    const ours = edit(TEXT, 'line 01 ', 'line ONE ')
    const theirs = edit(TEXT, 'line 18 ', 'line EIGHTEEN ')
    const r = await mergeOf({ 'dir/a.txt': TEXT, 'dir/other.txt': 'o\n' }, { 'dir/other.txt': 'o\n' }, { 'dir/a.txt': theirs, 'dir/other.txt': 'o\n', 'new/a.txt': '' })
    expect(r.conflicts.map((c) => c.kind)).toEqual(['modify/delete'])
    const renamed = await mergeOf({ 'dir/a.txt': TEXT }, { 'lib/a.txt': ours }, { 'dir/a.txt': theirs })
    expect(renamed.conflicts).toEqual([])
    expect(renamed.files).toEqual({ 'lib/a.txt': edit(ours, 'line 18 ', 'line EIGHTEEN ') })
    expect(renamed.lineMerged).toEqual(['lib/a.txt'])
  })

  it('follows a rename made by theirs as well as by ours', async () => {
    const edited = edit(TEXT, 'line 07 ', 'line SEVEN ')
    const r = await mergeOf({ 'a.txt': TEXT }, { 'a.txt': edited }, { 'b.txt': TEXT })
    expect(r.conflicts).toEqual([])
    expect(r.files).toEqual({ 'b.txt': edited })
  })

  it('merges a file both sides renamed to the same path against the base', async () => {
    const r = await mergeOf({ 'a.txt': TEXT }, { 'b.txt': edit(TEXT, 'line 01 ', 'line ONE ') }, { 'b.txt': edit(TEXT, 'line 18 ', 'line X ') })
    expect(r.conflicts).toEqual([])
    expect(r.files).toEqual({ 'b.txt': edit(edit(TEXT, 'line 01 ', 'line ONE '), 'line 18 ', 'line X ') })
  })

  it('reports a file renamed to different paths on each side as a rename/rename conflict, keeping both', async () => {
    const r = await mergeOf({ 'a.txt': TEXT }, { 'b.txt': TEXT }, { 'c.txt': TEXT })
    expect(r.conflicts).toEqual([{ path: 'a.txt', kind: 'rename/rename', kept: { ours: 'b.txt', theirs: 'c.txt' } }])
    expect(r.files).toEqual({ 'b.txt': TEXT, 'c.txt': TEXT })
  })

  it('reports a file renamed on one side and deleted on the other as a rename/delete conflict, keeping the renamed file', async () => {
    const r = await mergeOf({ 'a.txt': TEXT, 'z.txt': 'z\n' }, { 'z.txt': 'z\n' }, { 'b.txt': TEXT, 'z.txt': 'z\n' })
    expect(r.conflicts).toEqual([{ path: 'a.txt', kind: 'rename/delete', kept: { ours: null, theirs: 'b.txt' } }])
    expect(r.files).toEqual({ 'b.txt': TEXT, 'z.txt': 'z\n' })
  })

  it('pairs files at the similarity threshold and not above it', async () => {
    // 20 lines of 22 bytes, 10 of them replaced by lines of the same length: exactly 50% alike
    const half = TEXT.split('\n')
      .map((line, i) => (i < 10 ? line.replace('of the', 'OF THE') : line))
      .join('\n')
    const base = { 'a.txt': TEXT }
    const ours = { 'b.txt': half }
    const theirs = { 'a.txt': edit(TEXT, 'line 19 ', 'line NINETEEN ') }
    const at49 = await mergeOf(base, ours, theirs, { threshold: 49 })
    expect(at49.renames.map((r) => r.score)).toEqual([50])
    expect(at49.conflicts).toEqual([])
    expect(Object.keys(at49.files)).toEqual(['b.txt'])
    const at51 = await mergeOf(base, ours, theirs, { threshold: 51 })
    expect(at51.renames).toEqual([])
    expect(at51.conflicts).toEqual([{ path: 'a.txt', kind: 'modify/delete', kept: { ours: null, theirs: 'a.txt' } }])
  })

  it('finds no renames when told not to: a rename and an edit are a modify/delete conflict', async () => {
    const edited = edit(TEXT, 'line 03 ', 'line THREE ')
    const r = await mergeOf({ 'a.txt': TEXT }, { 'b.txt': TEXT }, { 'a.txt': edited }, false)
    expect(r.renames).toEqual([])
    expect(r.conflicts).toEqual([{ path: 'a.txt', kind: 'modify/delete', kept: { ours: null, theirs: 'a.txt' } }])
    expect(r.files).toEqual({ 'a.txt': edited, 'b.txt': TEXT })
  })

  it('pairs binary files only when identical', async () => {
    const binary = Buffer.concat([Buffer.from([0, 1, 2, 3]), Buffer.from(TEXT)])
    const changed = Buffer.concat([binary, Buffer.from('more\n')])
    const exact = await mergeOf({ 'img.bin': binary }, { 'assets/img.bin': binary }, { 'img.bin': changed })
    expect(exact.conflicts).toEqual([])
    expect(exact.files).toEqual({ 'assets/img.bin': changed.toString('latin1') })
    const edited = await mergeOf({ 'img.bin': binary }, { 'assets/img.bin': changed }, { 'img.bin': Buffer.concat([binary, Buffer.from('x')]) })
    expect(edited.renames).toEqual([])
    expect(edited.conflicts.map((c) => c.kind)).toEqual(['modify/delete'])
  })

  it('past the limit of pairs compares nothing by content but still pairs identical files', async () => {
    const other = Array.from({ length: 20 }, (_, i) => `another ${i} entirely\n`).join('')
    const base = { 'a.txt': TEXT, 'c.txt': other, 'e.txt': TEXT + other }
    const ours = { 'b.txt': TEXT, 'd.txt': edit(other, 'another 1 ', 'another ONE '), 'f.txt': edit(TEXT + other, 'line 01 ', 'x ') }
    const theirs = { 'a.txt': TEXT + '!\n', 'c.txt': other + '!\n', 'e.txt': TEXT + other + '!\n' }
    const limited = await mergeOf(base, ours, theirs, { limit: 1 })
    expect(limited.inexactRenamesSkipped).toBe(true)
    expect(limited.renames.map((r) => `${r.from}>${r.to}`)).toEqual(['a.txt>b.txt'])
    const unlimited = await mergeOf(base, ours, theirs)
    expect(unlimited.inexactRenamesSkipped).toBe(false)
    expect(unlimited.renames.map((r) => `${r.from}>${r.to}`).sort()).toEqual(['a.txt>b.txt', 'c.txt>d.txt', 'e.txt>f.txt'])
    expect(unlimited.conflicts).toEqual([])
  })
})
