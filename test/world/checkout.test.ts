import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DirtyWorkspaceError, TargetNotEmptyError, checkout, snapshotWorkspace, status } from '../../src/index.js'
import { readRef } from '../../src/store/refs.js'
import { readSnapshot, readTree } from '../../src/world/tree/readObjects.js'
import { tempDir } from '../helpers/tmp.js'
import { dirState, storeWorkspace } from '../helpers/workspace.js'

const project = {
  'README.md': '# demo\n',
  'bin/run.sh': { content: '#!/bin/sh\necho hi\n', mode: 0o755 },
  'src/a.ts': 'export const a = 1\n',
  'src/deep/er/b.ts': 'export const b = 2\n',
  'empty/nested-empty': { dir: true as const },
  'link-to-a': { symlink: 'src/a.ts' },
  dangling: { symlink: 'does/not/exist' },
  'dir-link': { symlink: 'src' },
  'binary.bin': Buffer.from([0, 1, 2, 255, 254, 0, 10, 13]),
}

describe('snapshot -> checkout --into round trip', () => {
  it('reproduces bytes, exec bits, symlink targets (not followed) and empty directories', async () => {
    const { dir, store } = await storeWorkspace(project)
    const snap = await snapshotWorkspace({ dir })
    expect(snap.created).toBe(true)
    const into = join(tempDir('into'), 'copy')
    const result = await checkout({ dir, id: snap.id, into })
    expect(result.mode).toBe('into')
    const [original, copy] = [await dirState(dir), await dirState(into)]
    expect(copy).toEqual(original)
    expect(copy['bin/run.sh']).toMatchObject({ mode: 0o755 })
    expect(copy['src/a.ts']).toMatchObject({ mode: 0o644 })
    expect(copy['dir-link']).toEqual({ type: 'symlink', target: 'src' })
    expect(copy['empty/nested-empty']).toMatchObject({ type: 'dir' })
    // The symlinked directory was stored as a link, not as a copy of what it points to.
    const root = await readTree(store, (await readSnapshot(store, snap.id)).world.tree)
    expect(root.entries.find((e) => e.name === 'dir-link')).toMatchObject({ type: 'symlink', target: 'src' })
  })

  it('refuses a target that exists and is not empty', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a' })
    const snap = await snapshotWorkspace({ dir })
    const into = tempDir('full')
    await fs.writeFile(join(into, 'keep.txt'), 'mine')
    await expect(checkout({ dir, id: snap.id, into })).rejects.toBeInstanceOf(TargetNotEmptyError)
    expect(await fs.readFile(join(into, 'keep.txt'), 'utf8')).toBe('mine')
  })
})

describe('in-place checkout', () => {
  it('moves the workspace back and forth between two snapshots exactly', async () => {
    const { dir, store } = await storeWorkspace(project)
    const first = await snapshotWorkspace({ dir, message: 'first' })
    const stateA = await dirState(dir)

    // Every kind of change: modify, delete, add, exec bit, file<->dir, file<->symlink, empty dir.
    await fs.writeFile(join(dir, 'README.md'), '# changed\n')
    await fs.rm(join(dir, 'src/deep'), { recursive: true })
    await fs.writeFile(join(dir, 'new.txt'), 'new')
    await fs.chmod(join(dir, 'bin/run.sh'), 0o644)
    await fs.rm(join(dir, 'binary.bin'))
    await fs.mkdir(join(dir, 'binary.bin'))
    await fs.writeFile(join(dir, 'binary.bin/inside'), 'was a file')
    await fs.rm(join(dir, 'empty'), { recursive: true })
    await fs.writeFile(join(dir, 'empty'), 'now a file')
    await fs.rm(join(dir, 'link-to-a'))
    await fs.writeFile(join(dir, 'link-to-a'), 'no longer a link')
    await fs.mkdir(join(dir, 'another-empty'))
    const second = await snapshotWorkspace({ dir, message: 'second' })
    expect(second.created).toBe(true)
    const stateB = await dirState(dir)
    expect(stateB).not.toEqual(stateA)

    const back = await checkout({ dir, id: first.id })
    expect(back.mode).toBe('in-place')
    expect(await dirState(dir)).toEqual(stateA)
    expect(await readRef(store, 'HEAD')).toBe(first.id)
    expect((await status({ dir })).clean).toBe(true)

    await checkout({ dir, id: second.id })
    expect(await dirState(dir)).toEqual(stateB)
    expect(await readRef(store, 'HEAD')).toBe(second.id)
    expect((await status({ dir })).clean).toBe(true)
  })

  it('places a new directory whole, counting each path in it as changed', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a' })
    const first = await snapshotWorkspace({ dir })
    await fs.mkdir(join(dir, 'new/deeper'), { recursive: true })
    await fs.writeFile(join(dir, 'new/deeper/x.txt'), 'x')
    await fs.writeFile(join(dir, 'new/y.txt'), 'y')
    await fs.symlink('y.txt', join(dir, 'new/link'))
    const second = await snapshotWorkspace({ dir })
    const stateB = await dirState(dir)
    await checkout({ dir, id: first.id })
    await expect(fs.stat(join(dir, 'new'))).rejects.toMatchObject({ code: 'ENOENT' })
    expect(await checkout({ dir, id: second.id })).toMatchObject({ changed: 5, files: 3 })
    expect(await dirState(dir)).toEqual(stateB)
  })

  it('keeps what the scan ignores in a directory the snapshot adds', async () => {
    const { dir } = await storeWorkspace({ '.gitignore': 'build/\n', 'a.txt': 'a' })
    const ignoring = await snapshotWorkspace({ dir, respectGitignore: true })
    await fs.rm(join(dir, '.gitignore'))
    await fs.mkdir(join(dir, 'build'))
    await fs.writeFile(join(dir, 'build/keep.txt'), 'tracked')
    const tracking = await snapshotWorkspace({ dir })
    await checkout({ dir, id: ignoring.id })
    await fs.mkdir(join(dir, 'build'))
    await fs.writeFile(join(dir, 'build/out.o'), 'ignored')
    expect((await status({ dir })).clean).toBe(true)
    await checkout({ dir, id: tracking.id })
    expect((await fs.readdir(join(dir, 'build'))).sort()).toEqual(['keep.txt', 'out.o'])
    expect(await fs.readFile(join(dir, 'build/out.o'), 'utf8')).toBe('ignored')
  })

  it('refuses a dirty workspace without force (DirtyWorkspaceError, exit 3) and overwrites it with force', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'one' })
    const first = await snapshotWorkspace({ dir })
    await fs.writeFile(join(dir, 'a.txt'), 'two')
    const second = await snapshotWorkspace({ dir })
    await fs.writeFile(join(dir, 'a.txt'), 'uncommitted work')
    await fs.writeFile(join(dir, 'untracked.txt'), 'also uncommitted')

    const refused = await checkout({ dir, id: first.id }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(DirtyWorkspaceError)
    expect((refused as DirtyWorkspaceError).exitCode).toBe(3)
    expect((refused as DirtyWorkspaceError).data['paths']).toEqual(['a.txt', 'untracked.txt'])
    expect(await fs.readFile(join(dir, 'a.txt'), 'utf8')).toBe('uncommitted work')

    await checkout({ dir, id: first.id, force: true })
    expect(await dirState(dir)).toEqual({ 'a.txt': { type: 'file', mode: 0o644, content: Buffer.from('one').toString('base64') } })
    expect(second.id).not.toBe(first.id)
  })

  it('turns a directory into a symlink and a symlink into a directory, both ways', async () => {
    const { dir } = await storeWorkspace({ 'real/f.txt': 'f', alias: { symlink: 'real' }, 'other/g.txt': 'g' })
    const first = await snapshotWorkspace({ dir })
    const stateA = await dirState(dir)
    await fs.rm(join(dir, 'alias'))
    await fs.mkdir(join(dir, 'alias'))
    await fs.writeFile(join(dir, 'alias/own.txt'), 'own')
    await fs.rm(join(dir, 'other'), { recursive: true })
    await fs.symlink('real', join(dir, 'other'))
    const second = await snapshotWorkspace({ dir })
    const stateB = await dirState(dir)
    await checkout({ dir, id: first.id })
    expect(await dirState(dir)).toEqual(stateA)
    await checkout({ dir, id: second.id })
    expect(await dirState(dir)).toEqual(stateB)
    expect(await fs.readFile(join(dir, 'real/f.txt'), 'utf8')).toBe('f')
  })

  it('follows a branch name (HEAD stays symbolic) and detaches on an id', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'one' })
    const first = await snapshotWorkspace({ dir })
    await fs.writeFile(join(dir, 'a.txt'), 'two')
    const second = await snapshotWorkspace({ dir })
    await checkout({ dir, id: first.id })
    expect((await status({ dir })).headName).toBeNull()
    await checkout({ dir, id: 'main' })
    expect((await status({ dir })).headName).toBe('main')
    expect(await readRef(store, 'HEAD')).toBe(second.id)
    expect(await fs.readFile(join(dir, 'a.txt'), 'utf8')).toBe('two')
  })
})
