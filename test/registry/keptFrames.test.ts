import { promises as fs, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { type Store, cloneImage, pushImage, snapshotWorkspace } from '../../src/index.js'
import { digestHex } from '../../src/objects/digest.js'
import { collectImage } from '../../src/registry/transfer/collectImage.js'
import { writePack } from '../../src/registry/pack/writePack.js'
import { PACK_MIN_OBJECTS } from '../../src/world/scan/scanWorkspace.js'
import { tempDir } from '../helpers/tmp.js'
import { storeWorkspace } from '../helpers/workspace.js'
import { randomFiles, remotePacks, treeListing } from './fixtures.js'

const credentials = null

/** A layout on disk to push to, and where its blobs are. */
function fileRemote(): { remote: string; blob: (digest: string) => Buffer } {
  const dir = tempDir('layout')
  return { remote: `file://${dir}:v1`, blob: (digest) => readFileSync(join(dir, 'blobs', 'sha256', digestHex(digest as `sha256:${string}`))) }
}

/** The compressed bytes of each frame of the store's packs that holds file contents only, or structured objects (trees) only: `which`. */
function framesOf(store: Store, structured: ReadonlySet<string>, which: 'contents' | 'trees'): Buffer[] {
  return store.packs.list().flatMap((pack) =>
    pack.index.frames
      .map((_, n) => n)
      .filter((n) => pack.index.objects.every((o) => o.frame !== n || structured.has(o.digest) === (which === 'trees')))
      .map((n) => store.packs.readCompressed(pack, n)),
  )
}

const FILES = 4000
/** Long names: the trees take more bytes than their files (each entry about 330). */
const path = (i: number) => `d${i % 500}/${'n'.repeat(200)}${i}.bin`

/**
 * A cold snapshot of more files than a snapshot writes one by one: its own pack of 1.6 MB
 * of contents (a frame and part of another) and then 1.3 MB of trees (500 directories:
 * the rest of that frame, a frame of their own and part of another).
 */
async function coldImage(seed: number) {
  const files = Object.fromEntries(Object.values(randomFiles(FILES, 400, seed)).map((bytes, i) => [path(i), bytes]))
  expect(FILES).toBeGreaterThan(PACK_MIN_OBJECTS)
  const { dir, store } = await storeWorkspace(files)
  const { id } = await snapshotWorkspace({ dir })
  const { structured } = await collectImage(store, id)
  return { dir, store, id, structured }
}

describe("a push takes the frames of a cold snapshot's pack as they are", () => {
  it('sends each frame of file contents, and of trees, byte for byte, compresses the rest, and the image clones whole', async () => {
    const { dir, store, id, structured } = await coldImage(1)
    const trees = framesOf(store, structured, 'trees')
    expect(trees.length).toBeGreaterThanOrEqual(1)
    const kept = [...framesOf(store, structured, 'contents'), ...trees]
    expect(kept.length).toBeGreaterThanOrEqual(2)
    const { remote, blob } = fileRemote()
    await pushImage({ store, id, remote, credentials })
    const [pack] = await remotePacks(remote)
    const sent = blob(pack!)
    for (const frame of kept) expect(sent.includes(frame)).toBe(true)
    const into = join(tempDir('clone'), 'ws')
    await cloneImage({ remote, into, credentials })
    expect(await treeListing(into)).toEqual(await treeListing(dir))
  })

  it('takes them too when the repository holds packs of other images already', async () => {
    const { store, id, structured } = await coldImage(4)
    const other = await storeWorkspace({ 'other.txt': 'another image of the repository' })
    const { remote, blob } = fileRemote()
    await pushImage({ dir: other.dir, id: (await snapshotWorkspace({ dir: other.dir })).id, remote: remote.replace(/:v1$/, ':other'), credentials })
    const pushed = await pushImage({ store, id, remote, credentials })
    expect(pushed.packs).toBe(1)
    const sent = blob((await remotePacks(remote))[0]!)
    for (const frame of [...framesOf(store, structured, 'contents'), ...framesOf(store, structured, 'trees')]) expect(sent.includes(frame)).toBe(true)
  })

  it('compresses every frame anew at a level asked for: the pack a walk of the image writes without the store’s frames', async () => {
    const { store, id, structured } = await coldImage(2)
    const { remote, blob } = fileRemote()
    await pushImage({ store, id, remote, credentials, level: 3 })
    const [pack] = await remotePacks(remote)
    const sent = blob(pack!)
    for (const frame of [...framesOf(store, structured, 'contents'), ...framesOf(store, structured, 'trees')]) expect(sent.includes(frame)).toBe(false)
    const { objects } = await collectImage(store, id)
    const fresh = await writePack(store, objects, join(tempDir('pack'), 'pack'), { structured })
    expect(fresh.keptFrames).toBe(0)
    expect(pack).toBe(fresh.digest)
  })

  it('builds a frame that holds files the image no longer has from the files it keeps (a push one snapshot deep), and the clone has them', async () => {
    const { dir, store, structured } = await coldImage(3)
    const before = [...framesOf(store, structured, 'contents'), ...framesOf(store, structured, 'trees')]
    // every 50th file goes: no frame of the first snapshot's pack, of files or of trees, is wholly in the second
    for (let i = 0; i < FILES; i += 50) await fs.rm(join(dir, path(i)))
    const { id } = await snapshotWorkspace({ dir })
    const { objects, structured: second } = await collectImage(store, id, { depth: 1 })
    const written = await writePack(store, objects, join(tempDir('pack'), 'pack'), { structured: second, keep: true })
    expect(written.keptFrames).toBe(0)
    const { remote, blob } = fileRemote()
    await pushImage({ store, id, remote, credentials, depth: 1 })
    const sent = blob((await remotePacks(remote))[0]!)
    for (const frame of before) expect(sent.includes(frame)).toBe(false)
    const into = join(tempDir('clone'), 'ws')
    await cloneImage({ remote, into, credentials })
    expect(await treeListing(into)).toEqual(await treeListing(dir))
  })
})
