import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { UnsafePathError, snapshotWorkspace } from '../../src/index.js'
import { fp } from '../helpers/cli.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'

describe('one rule for symlinks leading out, on every way in', () => {
  it('snapshot refuses one (exit 5, naming it) unless allowed; the snapshot then checks out only when allowed too', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a', 'sub/b.txt': 'b' })
    await fs.symlink('/root/.ssh/id', join(dir, 'sub/key'))
    await expect(snapshotWorkspace({ dir, store })).rejects.toMatchObject({ code: 'UnsafePathError', exitCode: 5, data: { path: 'sub/key' } })
    const cli = await fp(dir, 'snapshot')
    expect(cli.code).toBe(5)
    expect(cli.stderr).toContain('sub/key')
    expect(cli.stderr).toContain('--allow-external-symlinks')

    const allowed = await fp(dir, 'snapshot', '--allow-external-symlinks', '--json')
    expect(allowed.code).toBe(0)
    const id = (JSON.parse(allowed.stdout) as { id: string }).id
    const target = join(tempDir('into'), 'out')
    expect((await fp(dir, 'checkout', id, '--into', target)).code).toBe(5)
    expect((await fp(dir, 'checkout', id, '--into', target, '--allow-external-symlinks')).code).toBe(0)
    expect(await fs.readlink(join(target, 'sub/key'))).toBe('/root/.ssh/id')
  })

  it('snapshot resolves through the workspace’s own links: a -> . and c -> a/a/../../.. leave', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a' })
    await fs.symlink('.', join(dir, 'a'))
    await fs.symlink('a/a/a/../../../../etc', join(dir, 'c'))
    await expect(snapshotWorkspace({ dir, store })).rejects.toBeInstanceOf(UnsafePathError)
    await fs.rm(join(dir, 'c'))
    await fs.symlink('a/a/a/a.txt', join(dir, 'c'))
    expect((await snapshotWorkspace({ dir, store })).created).toBe(true)
  })
})
