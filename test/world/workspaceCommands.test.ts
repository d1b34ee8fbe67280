import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { fp, fpJson } from '../helpers/cli.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'

async function snapshotted(files: Parameters<typeof makeWorkspace>[0]): Promise<string> {
  const dir = await makeWorkspace(files)
  expect((await fp(dir, 'init')).code).toBe(0)
  expect((await fp(dir, 'snapshot', '-m', 'first')).code).toBe(0)
  return dir
}

describe('workspace commands as a new user meets them', () => {
  it('a fresh store checks out an unpacked snapshot in place (its empty workspace is clean)', async () => {
    const dir = await snapshotted({ 'a.txt': 'packed', 'b/c.txt': 'deeper' })
    const file = join(tempDir('packs'), 'image.fpk')
    const pack = await fpJson<{ id: string }>(dir, 'pack', 'HEAD', '-o', file)
    expect(pack.code).toBe(0)
    const other = await makeWorkspace({})
    expect((await fp(other, 'init')).code).toBe(0)
    const unpack = await fpJson<{ id: string }>(other, 'unpack', file)
    expect(unpack.code).toBe(0)
    expect((await fp(other, 'status')).stdout).toContain('clean')
    const checkout = await fp(other, 'checkout', unpack.json.id)
    expect(checkout.stderr).toBe('')
    expect(checkout.code).toBe(0)
    expect(await fs.readFile(join(other, 'b/c.txt'), 'utf8')).toBe('deeper')
  })

  it('snapshot and clone report the same file count for the same tree', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a', 'b/c.txt': 'c', 'd/': { dir: true }, 'link': { symlink: 'a.txt' } })
    expect((await fp(dir, 'init')).code).toBe(0)
    const snap = await fpJson<{ files: number }>(dir, 'snapshot')
    const layout = join(tempDir('layout'), 'oci')
    expect((await fp(dir, 'push', 'HEAD', `file://${layout}:v1`)).code).toBe(0)
    const into = join(tempDir('clone'), 'agent')
    const clone = await fpJson<{ files: number }>(tempDir('other'), 'clone', `file://${layout}:v1`, '--into', into)
    expect(clone.code).toBe(0)
    expect(snap.json.files).toBe(2)
    expect(clone.json.files).toBe(snap.json.files)
  })

  it("status uses git's letters: M for a mode change, T for a type change", async () => {
    const dir = await snapshotted({ 'run.sh': 'echo', 'f': 'file' })
    await fs.chmod(join(dir, 'run.sh'), 0o755)
    await fs.rm(join(dir, 'f'))
    await fs.symlink('run.sh', join(dir, 'f'))
    const lines = (await fp(dir, 'status')).stdout.split('\n')
    expect(lines).toContainEqual(expect.stringMatching(/^M run\.sh /))
    expect(lines).toContainEqual(expect.stringMatching(/^T f /))
  })

  it('init adds the store to an existing .gitignore, once, and creates none', async () => {
    const withIgnore = await makeWorkspace({ '.gitignore': 'node_modules' })
    expect((await fpJson(withIgnore, 'init')).json).toMatchObject({ gitignoreUpdated: true })
    expect(await fs.readFile(join(withIgnore, '.gitignore'), 'utf8')).toBe('node_modules\n/.forkpoint/\n')
    expect((await fpJson(withIgnore, 'init')).json).toMatchObject({ gitignoreUpdated: false })
    expect(await fs.readFile(join(withIgnore, '.gitignore'), 'utf8')).toBe('node_modules\n/.forkpoint/\n')
    const without = await makeWorkspace({ 'a.txt': 'a' })
    expect((await fp(without, 'init')).code).toBe(0)
    await expect(fs.stat(join(without, '.gitignore'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('--respect-gitignore is remembered: status agrees with the snapshot until it is turned off', async () => {
    const dir = await makeWorkspace({ '.gitignore': 'build/\n', 'a.txt': 'a', 'build/out.js': 'x' })
    expect((await fp(dir, 'init')).code).toBe(0)
    expect((await fp(dir, 'snapshot', '--respect-gitignore')).code).toBe(0)
    expect((await fp(dir, 'status')).stdout).toContain('clean')
    await fs.writeFile(join(dir, 'build/more.js'), 'y')
    expect((await fp(dir, 'status')).stdout).toContain('clean')
    expect((await fp(dir, 'checkout', 'HEAD')).code).toBe(0)
    expect((await fp(dir, 'snapshot', '--no-respect-gitignore')).code).toBe(0)
    const tracked = await fpJson<{ clean: boolean }>(dir, 'status')
    expect(tracked.json.clean).toBe(true)
    await fs.writeFile(join(dir, 'build/third.js'), 'z')
    expect((await fpJson<{ clean: boolean }>(dir, 'status')).json.clean).toBe(false)
  })

  it('leaves a nested workspace’s store out of snapshots (as git leaves out a nested .git), so they check out', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a', 'sub/b.txt': 'b' })
    expect((await fp(join(dir, 'sub'), 'init')).code).toBe(0)
    expect((await fp(dir, 'init')).code).toBe(0)
    expect((await fp(dir, 'snapshot')).code).toBe(0)
    const into = join(tempDir('into'), 'out')
    expect((await fp(dir, 'checkout', 'HEAD', '--into', into)).code).toBe(0)
    expect((await fs.readdir(join(into, 'sub'))).sort()).toEqual(['b.txt'])
  })
})
