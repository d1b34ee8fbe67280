import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkout, pullImage, pushImage, snapshotWorkspace } from '../../src/index.js'
import { parseRemote } from '../../src/registry/transport/parseRemote.js'
import { readRef } from '../../src/store/refs.js'
import { remoteLocation } from '../../src/registry/transport/parseRemote.js'
import { Staging } from '../../src/registry/transfer/Staging.js'
import { tempDir } from '../helpers/tmp.js'
import { emptyStore, makeImage, randomFiles, storeState, treeListing } from './fixtures.js'
import { TRANSPORTS, useRemotes } from './remotes.js'

const remotes = useRemotes()
const credentials = null

describe.each(TRANSPORTS)('push and pull through %s', (kind) => {
  it('round-trips an image: same id, same files, modes and symlinks', async () => {
    const image = await makeImage({ 'a.txt': 'hello', 'bin/run': { content: '#!/bin/sh\n', mode: 0o755 }, 'docs/link': { symlink: '../a.txt' }, 'empty/': { dir: true } })
    const remote = remotes.remote(kind)
    const pushed = await pushImage({ store: image.store, id: image.id, remote, credentials })
    expect(pushed).toMatchObject({ id: image.id, tag: 'v1', sentObjects: pushed.objects })
    const store = await emptyStore()
    const pulled = await pullImage({ store, remote, credentials })
    expect(pulled).toMatchObject({ id: image.id, tag: 'v1', manifest: pushed.manifest, fetchedObjects: pushed.objects })
    expect(await readRef(store, 'refs/tags/v1')).toBe(image.id)
    const out = join(tempDir('out'), 'tree')
    await checkout({ store, id: 'v1', into: out })
    expect(await treeListing(out)).toEqual(await treeListing(image.dir))
    const again = await pullImage({ store, remote, credentials })
    expect(again).toMatchObject({ id: image.id, objects: pushed.objects, fetchedObjects: 0 })
  })

  it('sends and fetches only what changed (under 1% of the bytes for one changed file)', async () => {
    const image = await makeImage(randomFiles(60, 64 * 1024))
    const remote = remotes.remote(kind)
    const first = await pushImage({ store: image.store, id: image.id, remote, credentials })
    const store = await emptyStore()
    await pullImage({ store, remote, credentials })

    await fs.writeFile(join(image.dir, 'dir3/file3.bin'), 'changed')
    const next = await snapshotWorkspace({ dir: image.dir, message: 'one file changed' })
    const again = await pushImage({ store: image.store, id: next.id, remote, credentials })
    expect(again.sentObjects).toBeLessThanOrEqual(4) // blob, its tree, the root tree, the snapshot
    expect(again.sentBytes).toBeLessThan(first.totalBytes / 100)
    const repull = await pullImage({ store, remote, credentials })
    expect(repull.id).toBe(next.id)
    expect(repull.fetchedObjects).toBe(again.sentObjects)
    expect(repull.fetchedBytes).toBe(again.sentBytes)
  })

  it('resumes an interrupted pull at frame granularity, leaving the store untouched until the image is complete', async () => {
    const image = await makeImage(randomFiles(40, 64 * 1024, 9))
    const remote = remotes.remote(kind)
    await pushImage({ store: image.store, id: image.id, remote, credentials })
    const whole = await pullImage({ store: await emptyStore(), remote, credentials })
    const store = await emptyStore()
    const before = await storeState(store)
    const abort = new AbortController()
    const first = pullImage({ store, remote, credentials, signal: abort.signal, onProgress: (p) => p.objects >= 30 && abort.abort() }) // past the first frame (the trees and 15 files)
    await expect(first).rejects.toThrow()
    expect(await storeState(store)).toEqual(before)

    const second = await pullImage({ store, remote, credentials })
    expect(second.id).toBe(image.id)
    expect(second.fetchedBytes).toBeLessThan(whole.fetchedBytes * 0.75) // the frames whose objects were staged are not fetched again
    const out = join(tempDir('out'), 'tree')
    await checkout({ store, id: 'v1', into: out })
    expect(await treeListing(out)).toEqual(await treeListing(image.dir))
    const staging = await Staging.open(store, `${remoteLocation(parseRemote(remote))}\0${second.manifest}`)
    expect(await fs.readdir(staging.dir)).toEqual([]) // staging removed once committed
    await staging.discard()
  })
})

describe('concurrent transfers', () => {
  it('two pulls of the same image into one store both succeed (one waits for the other)', async () => {
    const image = await makeImage(randomFiles(20, 16 * 1024, 3))
    const remote = remotes.remote('file')
    await pushImage({ store: image.store, id: image.id, remote, credentials })
    const store = await emptyStore()
    const [a, b] = await Promise.all([pullImage({ store, remote, credentials }), pullImage({ store, remote, credentials })])
    expect(a.id).toBe(image.id)
    expect(b.id).toBe(image.id)
    expect(Math.min(a.fetchedObjects, b.fetchedObjects)).toBe(0) // the one that waited found everything in the store
    expect(Math.max(a.fetchedObjects, b.fetchedObjects)).toBe(a.objects)
  })
})
