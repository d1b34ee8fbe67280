import { existsSync, promises as fs } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { abortCommit } from '../../src/branch/commit/abortCommit.js'
import { makeBranch } from '../../src/branch/lifecycle/makeBranch.js'
import { abortNamedWithEffects, commitNamedWithEffects } from '../../src/effects/branchEffects.js'
import { status } from '../../src/world/workspace/status.js'
import { fp } from '../helpers/cli.js'
import { until } from '../helpers/until.js'
import { type DirState, dirState, storeWorkspace } from '../helpers/workspace.js'

/** A workspace and a branch of it that both changed `files` since the branch was made: the parent's side written after the branch's. */
async function bothChanged(
  base: Record<string, string | Buffer>,
  branch: Record<string, string | Buffer>,
  parent: Record<string, string | Buffer>,
): Promise<{ dir: string; before: DirState }> {
  const { dir } = await storeWorkspace(base)
  const made = await makeBranch({ dir, name: 'c1' })
  for (const [path, bytes] of Object.entries(branch)) await fs.writeFile(join(made.path, path), bytes)
  for (const [path, bytes] of Object.entries(parent)) await fs.writeFile(join(dir, path), bytes)
  return { dir, before: await dirState(dir) }
}

const read = (dir: string, path: string) => fs.readFile(join(dir, path), 'utf8')
const commit = (dir: string, more: { resume?: boolean; keepLeftovers?: boolean } = {}) => commitNamedWithEffects({ dir, name: 'c1', stopOnConflict: true, env: {}, ...more })

describe('a branch commit that meets conflicts in the workspace', () => {
  it('leaves diff3 markers and the commit in progress (exit 3 naming the path and the next commands); --continue refuses while markers remain, then applies the rest', async () => {
    const { dir } = await bothChanged({ 'Readme.md': '1\n2\n3\n', 'k.txt': 'k\n' }, { 'Readme.md': '1\nbranch\n3\n', 'k.txt': 'kk\n' }, { 'Readme.md': '1\nparent\n3\n' })
    const stopped = commit(dir)
    await expect(stopped).rejects.toMatchObject({ code: 'ConflictError', exitCode: 3, data: { paths: ['Readme.md'], inProgress: true } })
    await expect(stopped).rejects.toThrow(/Readme\.md.*'forkpoint commit c1 --continue'.*'forkpoint commit c1 --abort'/)
    expect(await read(dir, 'Readme.md')).toBe('1\n<<<<<<< parent\nparent\n||||||| base\n2\n=======\nbranch\n>>>>>>> c1\n3\n')
    expect(await read(dir, 'k.txt')).toBe('k\n') // nothing else applied until --continue
    expect((await status({ dir })).commit).toEqual({ branch: 'c1', conflicts: ['Readme.md'] })
    expect((await fp(dir, 'status')).stdout).toContain("committing branch c1 with 1 conflict (Readme.md): fix the files, then 'forkpoint commit c1 --continue'")

    await expect(commit(dir)).rejects.toMatchObject({ code: 'UsageError', exitCode: 2 })
    await expect(commit(dir, { resume: true })).rejects.toMatchObject({ code: 'MergeConflictError', exitCode: 3, data: { paths: ['Readme.md'] } })
    await fs.writeFile(join(dir, 'Readme.md'), '1\nboth\n3\n')
    const done = await commit(dir, { resume: true })
    expect(done.written).toEqual(['k.txt'])
    expect(await read(dir, 'Readme.md')).toBe('1\nboth\n3\n')
    expect(await read(dir, 'k.txt')).toBe('kk\n')
    expect((await status({ dir })).commit).toBeNull()
    await expect(commit(dir, { resume: true })).rejects.toMatchObject({ code: 'BranchNotFoundError' })
  })

  it('abort refuses (exit 3) while a command runs in the branch, and leaves its stopped commit as it was', async () => {
    const { dir } = await bothChanged({ 'f.txt': '1\n2\n' }, { 'f.txt': '1\nb\n' }, { 'f.txt': '1\np\n' })
    await expect(commit(dir)).rejects.toMatchObject({ code: 'ConflictError', data: { inProgress: true } })
    const listed = JSON.parse((await fp(dir, 'branch', '--json')).stdout) as { branches: Array<{ name: string; path: string }> }
    const path = listed.branches.find((b) => b.name === 'c1')!.path
    const running = fp(dir, 'run', '--branch', 'c1', '--', 'sh', '-c', 'touch started; while [ ! -e go ]; do sleep 0.05; done')
    await until(() => existsSync(join(path, 'started')), 'the command in the branch to start')
    await expect(abortNamedWithEffects({ dir, name: 'c1', env: {} })).rejects.toMatchObject({ code: 'BranchBusyError', exitCode: 3 })
    expect((await status({ dir })).commit).toEqual({ branch: 'c1', conflicts: ['f.txt'] })
    await fs.writeFile(join(path, 'go'), '')
    expect((await running).code).toBe(0)
    await abortNamedWithEffects({ dir, name: 'c1', env: {} })
    expect((await status({ dir })).commit).toBeNull()
    expect(await read(dir, 'f.txt')).toBe('1\np\n')
  })

  it('--abort puts the files back as they were before the commit, whatever was done to them since; the branch stays live', async () => {
    const bin = (b: number) => Buffer.from([0, 1, 2, b])
    const { dir, before } = await bothChanged({ 'f.txt': '1\n2\n', 'img.bin': bin(0) }, { 'f.txt': '1\nb\n', 'img.bin': bin(1) }, { 'f.txt': '1\np\n', 'img.bin': bin(2) })
    await expect(commit(dir)).rejects.toMatchObject({ code: 'ConflictError', data: { inProgress: true } })
    expect(await fs.readFile(join(dir, 'img.bin~c1'))).toEqual(bin(1))
    await fs.writeFile(join(dir, 'f.txt'), 'half fixed\n')
    expect(await abortCommit({ dir, name: 'c1' })).toMatchObject({ name: 'c1' })
    expect(await dirState(dir)).toEqual(before)
    expect((await status({ dir })).commit).toBeNull()
    await expect(abortCommit({ dir, name: 'c1' })).rejects.toMatchObject({ code: 'UsageError', exitCode: 2 })
    await expect(commit(dir)).rejects.toMatchObject({ code: 'ConflictError' }) // still live: it stops again
    await abortNamedWithEffects({ dir, name: 'c1', env: {} }) // ending the branch undoes its commit in progress too
    expect(await dirState(dir)).toEqual(before)
    expect((await status({ dir })).commit).toBeNull()
  })

  it('--continue refuses while the version kept beside a binary conflict is still there, unless keepLeftovers', async () => {
    const bin = (b: number) => Buffer.from([0, 1, 2, b])
    const { dir } = await bothChanged({ 'img.bin': bin(0) }, { 'img.bin': bin(1) }, { 'img.bin': bin(2) })
    await expect(commit(dir)).rejects.toMatchObject({ code: 'ConflictError', data: { inProgress: true } })
    await expect(commit(dir, { resume: true })).rejects.toMatchObject({ code: 'MergeConflictError', exitCode: 3, data: { paths: ['img.bin~c1'] } })
    await commit(dir, { resume: true, keepLeftovers: true })
    expect(await fs.readFile(join(dir, 'img.bin'))).toEqual(bin(2))
    expect(await fs.readFile(join(dir, 'img.bin~c1'))).toEqual(bin(1))
  })

  it('without stopOnConflict (the library default) applies nothing and writes no marker, as before', async () => {
    const { dir, before } = await bothChanged({ 'f.txt': '1\n2\n' }, { 'f.txt': '1\nb\n' }, { 'f.txt': '1\np\n' })
    await expect(commitNamedWithEffects({ dir, name: 'c1', env: {} })).rejects.toMatchObject({ code: 'ConflictError', data: { inProgress: false } })
    expect(await dirState(dir)).toEqual(before)
    expect((await status({ dir })).commit).toBeNull()
  })

  it('writes nothing through a directory the workspace replaced by a symlink: the conflict applies nothing', async () => {
    const { dir } = await storeWorkspace({ 'd/f.txt': '1\n' })
    const made = await makeBranch({ dir, name: 'c1' })
    await fs.writeFile(join(made.path, 'd/f.txt'), 'branch\n')
    const outside = await fs.mkdtemp(join(tmpdir(), 'outside-'))
    await fs.writeFile(join(outside, 'f.txt'), 'outside\n')
    await fs.rm(join(dir, 'd'), { recursive: true })
    await fs.symlink(outside, join(dir, 'd'))
    await expect(commit(dir)).rejects.toMatchObject({ code: 'ConflictError', data: { paths: ['d/f.txt'], inProgress: false } })
    expect(await fs.readdir(outside)).toEqual(['f.txt'])
    expect(await read(outside, 'f.txt')).toBe('outside\n')
  })
})
