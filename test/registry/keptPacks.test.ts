import { existsSync, promises as fs, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Store, Workspace, checkout, cloneImage, deleteTag, gc, pullImage, pushImage, showObject, snapshotWorkspace, verify } from '../../src/index.js'
import { KEEP_WHOLE_MIN_OBJECTS } from '../../src/registry/transfer/stagePackedObjects.js'
import { listObjects } from '../../src/store/objectGraph.js'
import { PACK_MIN_OBJECTS } from '../../src/world/scan/scanWorkspace.js'
import { tempDir } from '../helpers/tmp.js'
import { emptyStore, expectRefusedUntouched, makeImage, randomFiles, remotePacks, storeState, treeListing } from './fixtures.js'
import { useRemotes } from './remotes.js'

const remotes = useRemotes()
const credentials = null

/** An image of more objects than a pull keeps as files, pushed to a file:// remote. */
async function bigImage(seed = 1) {
  const image = await makeImage({ ...randomFiles(KEEP_WHOLE_MIN_OBJECTS + 40, 2048, seed), 'small.txt': 'small' })
  const remote = remotes.remote('file')
  await pushImage({ store: image.store, id: image.id, remote, credentials })
  return { ...image, remote }
}

const packFiles = (store: Store) => (existsSync(store.packs.dir) ? readdirSync(store.packs.dir).sort() : [])

describe('a pull keeps a big pack whole', () => {
  it('a cold clone writes one pack, not a file per object; the image checks out, verifies, resolves short ids and pushes on', async () => {
    const image = await bigImage()
    const into = join(tempDir('clone'), 'ws')
    const cloned = await cloneImage({ remote: image.remote, into, credentials })
    const store = await Store.open(join(into, '.forkpoint'))
    expect(packFiles(store).map((n) => n.slice(64))).toEqual(['.idx', '.pack'])
    expect((await listObjects(store)).length).toBe(0) // every object is in the pack
    expect(await treeListing(into)).toEqual(await treeListing(image.dir))
    expect(await verify({ store })).toMatchObject({ ok: true, checked: cloned.objects })
    expect((await showObject({ store, id: image.id.slice(7, 19) })).id).toBe(image.id)
    // what the pack holds is read for a push elsewhere, and arrives whole
    const onward = remotes.remote('file', 'onward')
    await pushImage({ store, id: image.id, remote: onward, credentials })
    const again = await emptyStore()
    await pullImage({ store: again, remote: onward, credentials })
    const out = join(tempDir('out'), 'ws')
    await checkout({ store: again, id: image.id, into: out })
    expect(await treeListing(out)).toEqual(await treeListing(image.dir))
  })

  it('a branch of a cloned workspace links its base directory from objects written out of the pack', async () => {
    const image = await bigImage(2)
    const into = join(tempDir('clone'), 'ws')
    await cloneImage({ remote: image.remote, into, credentials })
    const ws = await Workspace.open({ dir: into, backend: 'overlay' })
    const branch = await ws.branch('try')
    await fs.writeFile(join(branch.path, 'small.txt'), 'changed in the branch')
    await branch.commit()
    expect(await fs.readFile(join(into, 'small.txt'), 'utf8')).toBe('changed in the branch')
    expect(await fs.readFile(join(into, 'dir3/file3.bin'))).toEqual(await fs.readFile(join(image.dir, 'dir3/file3.bin')))
  })

  it('an interrupted pull of a whole pack resumes from the bytes it had, the store untouched until then', async () => {
    const image = await bigImage(7)
    const whole = await pullImage({ store: await emptyStore(), remote: image.remote, credentials })
    const store = await emptyStore()
    const before = await storeState(store)
    const abort = new AbortController()
    const first = pullImage({ store, remote: image.remote, credentials, signal: abort.signal, onProgress: (p) => p.totalBytes > 0 && p.bytes >= p.totalBytes / 2 && abort.abort() })
    await expect(first).rejects.toThrow()
    expect(await storeState(store)).toEqual(before)
    const second = await pullImage({ store, remote: image.remote, credentials })
    expect(second.fetchedBytes).toBeLessThan(whole.fetchedBytes * 0.75)
    expect(packFiles(store)).toHaveLength(2)
    const out = join(tempDir('out'), 'ws')
    await checkout({ store, id: image.id, into: out })
    expect(await treeListing(out)).toEqual(await treeListing(image.dir))
  })

  it('a small incremental pull goes in as files beside the kept pack', async () => {
    const image = await bigImage(3)
    const store = await emptyStore()
    await pullImage({ store, remote: image.remote, credentials })
    await fs.writeFile(join(image.dir, 'small.txt'), 'next')
    const next = await snapshotWorkspace({ dir: image.dir, message: 'next' })
    await pushImage({ store: image.store, id: next.id, remote: image.remote, credentials })
    const pulled = await pullImage({ store, remote: image.remote, credentials })
    expect(pulled.fetchedObjects).toBeLessThan(10)
    expect(packFiles(store)).toHaveLength(2) // still the one pack
    expect((await listObjects(store)).length).toBe(pulled.fetchedObjects)
  })

  it('gc keeps a pack its images still reach, and drops one partly dead after writing out what lives', async () => {
    const image = await bigImage(4)
    const store = await emptyStore()
    await pullImage({ store, remote: image.remote, credentials, tag: 'first' })
    expect((await gc({ store, prune: 'now' })).removed).toEqual([])
    expect(packFiles(store)).toHaveLength(2)
    // a second image (of its own history) sharing all but one file; then the first is let go
    const second = await makeImage({ ...randomFiles(KEEP_WHOLE_MIN_OBJECTS + 40, 2048, 4), 'small.txt': 'second' })
    const elsewhere = remotes.remote('file', 'second')
    await pushImage({ store: second.store, id: second.id, remote: elsewhere, credentials })
    await pullImage({ store, remote: elsewhere, credentials, tag: 'second' })
    await deleteTag({ store, name: 'first' })
    const swept = await gc({ store, prune: 'now' })
    expect(swept.removed).toContain(image.id)
    expect(packFiles(store)).toEqual([])
    expect(await verify({ store })).toMatchObject({ ok: true })
    const out = join(tempDir('out'), 'ws')
    await checkout({ store, id: second.id, into: out })
    expect(await treeListing(out)).toEqual(await treeListing(second.dir))
  })
})

describe('a kept pack that goes bad', () => {
  it('a damaged pack is refused when read (exit 5) and verify names its objects', async () => {
    const image = await bigImage(5)
    const store = await emptyStore()
    await pullImage({ store, remote: image.remote, credentials })
    const pack = join(
      store.packs.dir,
      packFiles(store).find((n) => n.endsWith('.pack'))!,
    )
    const bytes = await fs.readFile(pack)
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff
    await fs.writeFile(pack, bytes)
    const fresh = await Store.open(store.root) // no frame of it cached
    const failure = await checkout({ store: fresh, id: image.id, into: join(tempDir('out'), 'ws') }).catch((e: unknown) => e)
    expect(failure).toMatchObject({ exitCode: 5 })
    const checked = await verify({ store: fresh })
    expect(checked.ok).toBe(false)
    expect(checked.problems.some((p) => p.type === 'corrupt')).toBe(true)
  })

  it('a remote pack that fails its check is refused (exit 5) with the store unchanged, whole or by ranges', async () => {
    const image = await bigImage(6)
    const [pack] = await remotePacks(image.remote)
    const blob = join(image.remote.replace(/^file:\/\//, '').replace(/:v1$/, ''), 'blobs', 'sha256', pack!.slice(7))
    const bytes = await fs.readFile(blob)
    bytes[bytes.length - 100]! ^= 0xff // inside the last frame: its checksum fails
    await fs.writeFile(blob, bytes)
    await expectRefusedUntouched((s) => pullImage({ store: s, remote: image.remote, credentials }), Error) // storeState counts kept packs too
  })
})

describe("a snapshot's own pack", () => {
  it('a cold snapshot whose objects its store packed pushes and clones like any other', async () => {
    const image = await makeImage({ ...randomFiles(PACK_MIN_OBJECTS + 10, 512, 9), 'small.txt': 'small' })
    expect(packFiles(image.store).map((n) => n.slice(64))).toEqual(['.idx', '.pack'])
    const remote = remotes.remote('file', 'own-pack')
    await pushImage({ store: image.store, id: image.id, remote, credentials })
    const into = join(tempDir('clone'), 'ws')
    await cloneImage({ remote, into, credentials })
    expect(await treeListing(into)).toEqual(await treeListing(image.dir))
    expect(await verify({ store: await Store.open(join(into, '.forkpoint')) })).toMatchObject({ ok: true })
  })
})
