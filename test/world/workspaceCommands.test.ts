import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { describe, expect, it } from 'vitest'
import { cloneCommand } from '../../src/cli/commands/clone.js'
import { initCommand } from '../../src/cli/commands/init.js'
import { packCommand } from '../../src/cli/commands/pack.js'
import { snapshotAgent } from '../../src/image/snapshotAgent.js'
import { unpackCommand } from '../../src/cli/commands/unpack.js'
import { makeWorkspace, tempDir } from '../helpers/tmp.js'
import { callOperation, renderingOf } from '../helpers/callOperation.js'

// The commands called in-process, as the CLI calls them (test/cli/ runs the binary for the wiring).
async function snapshotted(files: Parameters<typeof makeWorkspace>[0]): Promise<string> {
  const dir = await makeWorkspace(files)
  await initCommand({ dir })
  await snapshotAgent({ dir, message: 'first' })
  return dir
}

async function statusText(dir: string): Promise<string> {
  return stripVTControlCharacters(renderingOf('status').human(await callOperation('status', { dir }), {}))
}

describe('workspace commands as a new user meets them', () => {
  it('a fresh store checks out an unpacked snapshot in place (its empty workspace is clean)', async () => {
    const dir = await snapshotted({ 'a.txt': 'packed', 'b/c.txt': 'deeper' })
    const file = join(tempDir('packs'), 'image.fpk')
    await packCommand({ dir, id: 'HEAD', output: file })
    const other = await makeWorkspace({})
    await initCommand({ dir: other })
    const unpacked = await unpackCommand({ dir: other, input: file })
    expect((await callOperation('status', { dir: other })).clean).toBe(true)
    expect(await callOperation('checkout', { dir: other, id: unpacked.id })).toMatchObject({ id: unpacked.id, mode: 'in-place' })
    expect(await fs.readFile(join(other, 'b/c.txt'), 'utf8')).toBe('deeper')
  })

  it('snapshot and clone report the same file count for the same tree', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a', 'b/c.txt': 'c', 'd/': { dir: true }, link: { symlink: 'a.txt' } })
    await initCommand({ dir })
    const snap = await snapshotAgent({ dir })
    const layout = join(tempDir('layout'), 'oci')
    await callOperation('push', { dir, id: 'HEAD', remote: `file://${layout}:v1` })
    const into = join(tempDir('clone'), 'agent')
    const clone = await cloneCommand({ dir: tempDir('other'), remote: `file://${layout}:v1`, into })
    expect(snap.files).toBe(2)
    expect(clone.files).toBe(snap.files)
  })

  it("status uses git's letters: M for a mode change, T for a type change", async () => {
    const dir = await snapshotted({ 'run.sh': 'echo', f: 'file' })
    await fs.chmod(join(dir, 'run.sh'), 0o755)
    await fs.rm(join(dir, 'f'))
    await fs.symlink('run.sh', join(dir, 'f'))
    const lines = (await statusText(dir)).split('\n')
    expect(lines).toContainEqual(expect.stringMatching(/^M run\.sh /))
    expect(lines).toContainEqual(expect.stringMatching(/^T f /))
  })

  it('init adds the store to an existing .gitignore, once, and creates none', async () => {
    const withIgnore = await makeWorkspace({ '.gitignore': 'node_modules' })
    expect(await initCommand({ dir: withIgnore })).toMatchObject({ gitignoreUpdated: true })
    expect(await fs.readFile(join(withIgnore, '.gitignore'), 'utf8')).toBe('node_modules\n/.forkpoint/\n')
    expect(await initCommand({ dir: withIgnore })).toMatchObject({ gitignoreUpdated: false })
    expect(await fs.readFile(join(withIgnore, '.gitignore'), 'utf8')).toBe('node_modules\n/.forkpoint/\n')
    const without = await makeWorkspace({ 'a.txt': 'a' })
    await initCommand({ dir: without })
    await expect(fs.stat(join(without, '.gitignore'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('--respect-gitignore is remembered: status agrees with the snapshot until it is turned off', async () => {
    const dir = await makeWorkspace({ '.gitignore': 'build/\n', 'a.txt': 'a', 'build/out.js': 'x' })
    await initCommand({ dir })
    await snapshotAgent({ dir, respectGitignore: true })
    expect((await callOperation('status', { dir })).clean).toBe(true)
    await fs.writeFile(join(dir, 'build/more.js'), 'y')
    expect((await callOperation('status', { dir })).clean).toBe(true)
    await callOperation('checkout', { dir, id: 'HEAD' })
    await snapshotAgent({ dir, respectGitignore: false })
    expect((await callOperation('status', { dir })).clean).toBe(true)
    await fs.writeFile(join(dir, 'build/third.js'), 'z')
    expect((await callOperation('status', { dir })).clean).toBe(false)
  })

  it('leaves a nested workspace’s store out of snapshots (as git leaves out a nested .git), so they check out', async () => {
    const dir = await makeWorkspace({ 'a.txt': 'a', 'sub/b.txt': 'b' })
    await initCommand({ dir: join(dir, 'sub') })
    await initCommand({ dir })
    await snapshotAgent({ dir })
    const into = join(tempDir('into'), 'out')
    await callOperation('checkout', { dir, id: 'HEAD', into })
    expect((await fs.readdir(join(into, 'sub'))).sort()).toEqual(['b.txt'])
  })
})
