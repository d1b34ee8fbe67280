import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { RefConflictError, createTag, snapshotWorkspace } from '../../src/index.js'
import { readRef } from '../../src/store/refs.js'
import { readReflog } from '../../src/store/reflog.js'
import { fp } from '../helpers/cli.js'
import { storeWorkspace } from '../helpers/workspace.js'

async function twoSnapshots() {
  const { dir, store } = await storeWorkspace({ 'a.txt': 'one' })
  const first = (await snapshotWorkspace({ dir })).id
  await fs.writeFile(join(dir, 'a.txt'), 'two')
  const second = (await snapshotWorkspace({ dir })).id
  return { dir, store, first, second }
}

describe('tag -f moves a tag; without it an existing tag is a conflict', () => {
  it('createTag refuses to move a tag unless forced, and re-tagging the same id is a no-op', async () => {
    const { store, first, second } = await twoSnapshots()
    await createTag({ store, name: 'v1', id: first })
    const error = (await createTag({ store, name: 'v1', id: second }).then(
      () => null,
      (e: unknown) => e,
    )) as RefConflictError
    expect(error).toBeInstanceOf(RefConflictError)
    expect(error.exitCode).toBe(3)
    expect(error.message).toContain('tag -f v1')
    expect(await readRef(store, 'refs/tags/v1')).toBe(first)
    expect(await createTag({ store, name: 'v1', id: first })).toEqual({ name: 'v1', id: first })
    expect(await readReflog(store, 'refs/tags/v1')).toHaveLength(1)
    await createTag({ store, name: 'v1', id: second, force: true })
    expect(await readRef(store, 'refs/tags/v1')).toBe(second)
  })

  it('forkpoint tag NAME ID exits 3 on an existing tag; tag -f NAME ID moves it', async () => {
    const { dir, store, first, second } = await twoSnapshots()
    expect((await fp(dir, 'tag', 'v1', first)).code).toBe(0)
    const refused = await fp(dir, 'tag', 'v1', second)
    expect(refused.code).toBe(3)
    expect(refused.stderr).toContain('tag v1 already exists')
    expect(await readRef(store, 'refs/tags/v1')).toBe(first)
    const moved = await fp(dir, 'tag', '-f', 'v1', second)
    expect(moved.code, moved.stderr).toBe(0)
    expect(await readRef(store, 'refs/tags/v1')).toBe(second)
  })
})
