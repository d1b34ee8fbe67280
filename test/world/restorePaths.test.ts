import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { UsageError, snapshotWorkspace } from '../../src/index.js'
import { readRef } from '../../src/store/refs.js'
import { restorePaths } from '../../src/world/checkout/restorePaths.js'
import { storeWorkspace } from '../helpers/workspace.js'

describe('checkout ID -- PATH…', () => {
  it('restores only the paths given, files and directories, leaving the rest and HEAD as they are', async () => {
    const { dir, store } = await storeWorkspace({ 'index.js': 'v1\n', 'other.js': 'v1\n', 'lib/a.js': 'a1\n', 'lib/b.js': 'b1\n', 'run.sh': { content: 'x\n', mode: 0o755 } })
    const first = await snapshotWorkspace({ dir })
    await fs.writeFile(join(dir, 'index.js'), 'v2\n')
    await fs.writeFile(join(dir, 'other.js'), 'v2\n')
    await fs.writeFile(join(dir, 'lib/a.js'), 'a2\n')
    await fs.rm(join(dir, 'lib/b.js'))
    await fs.writeFile(join(dir, 'lib/new.js'), 'new\n')
    await fs.rm(join(dir, 'run.sh'))
    const second = await snapshotWorkspace({ dir })
    await fs.writeFile(join(dir, 'other.js'), 'uncommitted\n')
    const result = await restorePaths({ dir, id: first.id, paths: ['index.js', 'lib', 'run.sh'] })
    expect(result).toMatchObject({ id: first.id, mode: 'paths', paths: ['index.js', 'lib', 'run.sh'] })
    expect(await fs.readFile(join(dir, 'index.js'), 'utf8')).toBe('v1\n')
    expect(await fs.readFile(join(dir, 'lib/a.js'), 'utf8')).toBe('a1\n')
    expect(await fs.readFile(join(dir, 'lib/b.js'), 'utf8')).toBe('b1\n')
    expect((await fs.stat(join(dir, 'run.sh'))).mode & 0o777).toBe(0o755)
    // git's overlay: what the image lacks stays, and so does every path not named
    expect(await fs.readFile(join(dir, 'lib/new.js'), 'utf8')).toBe('new\n')
    expect(await fs.readFile(join(dir, 'other.js'), 'utf8')).toBe('uncommitted\n')
    expect(await readRef(store, 'HEAD')).toBe(second.id)
  })

  it('takes paths relative to the directory it runs in, and overwrites uncommitted changes there as git does', async () => {
    const { dir } = await storeWorkspace({ 'lib/a.js': 'a1\n' })
    const first = await snapshotWorkspace({ dir })
    await fs.writeFile(join(dir, 'lib/a.js'), 'edited\n')
    await restorePaths({ dir: join(dir, 'lib'), id: first.id, paths: ['a.js'] })
    expect(await fs.readFile(join(dir, 'lib/a.js'), 'utf8')).toBe('a1\n')
  })

  it('refuses (exit 2, nothing written) a path the image does not have, or one outside the workspace', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a1\n' })
    const first = await snapshotWorkspace({ dir })
    await fs.writeFile(join(dir, 'a.txt'), 'a2\n')
    for (const paths of [['a.txt', 'missing.txt'], ['../elsewhere']]) {
      const err = await restorePaths({ dir, id: first.id, paths }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(UsageError)
      expect((err as UsageError).exitCode).toBe(2)
    }
    expect(await fs.readFile(join(dir, 'a.txt'), 'utf8')).toBe('a2\n')
  })
})
