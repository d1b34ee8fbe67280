import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Store, checkout, cloneImage, pullImage, pushImage, snapshotWorkspace } from '../../src/index.js'
import { readRef } from '../../src/store/refs.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'

/** A workspace with two snapshots on main, and an empty file registry. */
async function pushed() {
  const { dir } = await storeWorkspace({ 'a.txt': 'one\n' })
  const first = await snapshotWorkspace({ dir, message: 'first' })
  await fs.writeFile(join(dir, 'a.txt'), 'two\n')
  const second = await snapshotWorkspace({ dir, message: 'second' })
  return { dir, first: first.id, second: second.id, remote: `file://${join(tempDir('registry'), 'layout')}` }
}

describe('one default tag for push, pull and clone: the ref in play, else latest', () => {
  it('push REMOTE on main and pull REMOTE on main meet at REMOTE:main; clone REMOTE gets it too', async () => {
    const { dir, second, remote } = await pushed()
    expect(await pushImage({ dir, id: 'HEAD', remote })).toMatchObject({ tag: 'main', id: second })
    const other = await Store.init(join(tempDir('other'), 'store'))
    expect(await pullImage({ store: other, remote })).toMatchObject({ tag: 'main', id: second })
    expect(await readRef(other, 'refs/tags/main')).toBe(second)
    const cloned = await cloneImage({ remote, into: join(tempDir('clone'), 'agent') })
    expect(cloned.id).toBe(second)
  })

  it('a detached HEAD pushes and pulls latest', async () => {
    const { dir, first, remote } = await pushed()
    await checkout({ dir, id: 'HEAD~1' })
    expect(await pushImage({ dir, id: 'HEAD', remote })).toMatchObject({ tag: 'latest', id: first })
    const { dir: puller } = await storeWorkspace({})
    await snapshotWorkspace({ dir: puller, message: 'mine' })
    await checkout({ dir: puller, id: 'HEAD' }) // an id: HEAD detached
    expect(await pullImage({ dir: puller, remote })).toMatchObject({ tag: 'latest', id: first })
  })
})
