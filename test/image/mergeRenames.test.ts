import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkout, snapshotWorkspace } from '../../src/index.js'
import { updateRef } from '../../src/store/refs.js'
import { merge } from '../../src/image/merge.js'
import { fp } from '../helpers/cli.js'
import { storeWorkspace } from '../helpers/workspace.js'

const TEXT = Array.from({ length: 30 }, (_, i) => `export const value${i} = ${i} // keep\n`).join('')
const EDITED = TEXT.replace('value7 = 7', 'value7 = 700')

/** A workspace whose `other` branch edited src/util.js while `main` moved it (and its `ours` changes made). */
async function renamedAndEdited(ours: (dir: string) => Promise<void>): Promise<string> {
  const { dir, store } = await storeWorkspace({ 'src/util.js': TEXT, 'README.md': 'hi\n' })
  const base = (await snapshotWorkspace({ dir, message: 'base' })).id
  await updateRef({ store, name: 'refs/heads/other', id: base, message: 'branch' })
  await checkout({ dir, id: 'other' })
  await fs.writeFile(join(dir, 'src/util.js'), EDITED)
  await snapshotWorkspace({ dir, message: 'theirs: edit' })
  await checkout({ dir, id: 'main' })
  await ours(dir)
  await snapshotWorkspace({ dir, message: 'ours' })
  return dir
}

const moveUtil = (to: string) => async (dir: string) => {
  await fs.mkdir(join(dir, to, '..'), { recursive: true })
  await fs.rename(join(dir, 'src/util.js'), join(dir, to))
}

describe('merge follows renames', () => {
  it('merges a rename on HEAD with an edit from FROM cleanly, the edit at the new path', async () => {
    const dir = await renamedAndEdited(moveUtil('lib/util.js'))
    const result = await merge({ dir, from: 'other' })
    expect(result.outcome).toBe('merged')
    expect(result.layers[0]?.summary).toBe('world: clean, 1 rename found')
    expect(await fs.readFile(join(dir, 'lib/util.js'), 'utf8')).toBe(EDITED)
    await expect(fs.stat(join(dir, 'src/util.js'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('with --no-renames stops on a modify/delete conflict, as before; --find-renames takes a percentage', async () => {
    const dir = await renamedAndEdited(moveUtil('lib/util.js'))
    const alone = await fp(dir, 'merge')
    expect([alone.code, alone.stderr]).toEqual([2, 'forkpoint: merge: give <from>, --continue or --abort\n'])
    const bad = await fp(dir, 'merge', 'other', '--find-renames=half')
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('findRenames: a similarity from 0 to 100')
    const off = await fp(dir, 'merge', 'other', '--no-renames')
    expect(off.code).toBe(3)
    expect(off.stdout).toContain('world: conflict (1 path: src/util.js)')
    expect((await fp(dir, 'merge', '--abort')).code).toBe(0)
    const on = await fp(dir, 'merge', 'other', '--find-renames=90')
    expect(on.code).toBe(0)
    expect(await fs.readFile(join(dir, 'lib/util.js'), 'utf8')).toBe(EDITED)
  })

  it('reports a rename/rename conflict by the paths each side chose', async () => {
    const { dir, store } = await storeWorkspace({ 'a.js': TEXT })
    const base = (await snapshotWorkspace({ dir, message: 'base' })).id
    await updateRef({ store, name: 'refs/heads/other', id: base, message: 'branch' })
    await checkout({ dir, id: 'other' })
    await fs.rename(join(dir, 'a.js'), join(dir, 'c.js'))
    await snapshotWorkspace({ dir, message: 'theirs' })
    await checkout({ dir, id: 'main' })
    await fs.rename(join(dir, 'a.js'), join(dir, 'b.js'))
    await snapshotWorkspace({ dir, message: 'ours' })
    const result = await fp(dir, 'merge', 'other')
    expect(result.code).toBe(3)
    expect(result.stdout).toContain('world: conflict (1 path: a.js renamed to b.js (ours) and to c.js (theirs))')
    expect((await fs.readdir(dir)).filter((n) => n.endsWith('.js')).sort()).toEqual(['b.js', 'c.js'])
  })
})
