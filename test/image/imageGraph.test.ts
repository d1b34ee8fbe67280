import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { UsageError, createTag, forkImage, snapshotAgent } from '../../src/index.js'
import { imageChanges } from '../../src/image/imageChanges.js'
import { imageGraph, newImageCache } from '../../src/image/imageGraph.js'
import { listTree } from '../../src/world/tree/listTree.js'
import { storeWorkspace } from '../helpers/workspace.js'

describe('the image graph and an image seen layer by layer', () => {
  it('pages every image reachable from HEAD, a head, a tag or a fork, children first, with refs and sizes', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'aaaa\n', 'd/b.txt': 'bb\n' })
    const base = await snapshotAgent({ dir, message: 'base' })
    await createTag({ dir, name: 'v1' })
    const [child] = await forkImage({ dir, id: base.id, n: 1 })
    await fs.writeFile(join(dir, 'c.txt'), 'c\n')
    const next = await snapshotAgent({ dir, message: 'next' })

    const cache = newImageCache()
    const all = await imageGraph({ dir, cache })
    expect(all.total).toBe(3)
    expect(all.nodes.at(-1)).toMatchObject({ id: base.id, parents: [], refs: ['tag: v1'], layers: [{ layer: 'world', files: 2, bytes: 8 }] })
    expect(all.nodes.find((n) => n.id === child!.id)).toMatchObject({ parents: [base.id], fork: { of: base.id, index: 0 } })
    expect(all.nodes.find((n) => n.id === next.id)).toMatchObject({ refs: expect.arrayContaining(['HEAD']) as string[], layers: [{ layer: 'world', files: 3, bytes: 10 }] })
    expect(cache.snapshots.size).toBe(3)

    const second = await imageGraph({ dir, cache, offset: 1, limit: 1 })
    expect({ total: second.total, offset: second.offset, ids: second.nodes.map((n) => n.id) }).toEqual({ total: 3, offset: 1, ids: [all.nodes[1]!.id] })
  })

  it('says what an image changed against either parent, and lists its directories; a path that is no directory is a usage error', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    const first = await snapshotAgent({ dir, message: 'first' })
    await fs.mkdir(join(dir, 'sub'))
    await fs.writeFile(join(dir, 'sub/new.txt'), 'new\n')
    const second = await snapshotAgent({ dir, message: 'second' })

    const changes = await imageChanges({ dir, id: second.id })
    expect(changes).toMatchObject({ parent: first.id, files: { total: 1, changes: [{ path: 'sub/new.txt', status: 'added' }] } })
    expect(changes.layers).toEqual([{ layer: 'world', before: expect.any(String) as string, after: expect.any(String) as string, changed: true }])
    expect((await imageChanges({ dir, id: first.id })).parent).toBeNull()
    await expect(imageChanges({ dir, id: second.id, parent: second.id })).rejects.toBeInstanceOf(UsageError)

    expect((await listTree({ dir, id: second.id })).entries.map((e) => [e.name, e.type])).toEqual([
      ['a.txt', 'file'],
      ['sub', 'dir'],
    ])
    expect((await listTree({ dir, id: second.id, path: 'sub' })).entries).toEqual([{ name: 'new.txt', type: 'file', mode: 0o644, size: 4 }])
    await expect(listTree({ dir, id: second.id, path: 'a.txt' })).rejects.toBeInstanceOf(UsageError)
  })
})
