import { execFile } from 'node:child_process'
import { existsSync, promises as fs } from 'node:fs'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { Store, checkout, cloneImage, gc, log, packImage, pullImage, pushImage, snapshotWorkspace, unpackImage, verify } from '../../src/index.js'
import { UsageError } from '../../src/errors/index.js'
import { REPACK_THRESHOLD } from '../../src/registry/pack/choosePacks.js'
import { EMPTY_CONFIG } from '../../src/registry/manifest/imageManifest.js'
import { openTransport } from '../../src/registry/transport/openTransport.js'
import { parseRemote } from '../../src/registry/transport/parseRemote.js'
import { readKnownRemoteImage, rememberPulledImage } from '../../src/registry/transfer/knownRemoteImage.js'
import { collectImage } from '../../src/registry/transfer/collectImage.js'
import { frameCompressor } from '../../src/store/frameCompressor.js'
import { openPackWriter, writePack } from '../../src/registry/pack/writePack.js'
import type { TransferProgress } from '../../src/registry/transport/TransferProgress.js'
import { sha256 } from '../../src/objects/digest.js'
import { tempDir } from '../helpers/tmp.js'
import { emptyStore, makeImage, randomFiles, remotePacks, treeListing, unpackStore } from './fixtures.js'
import { TRANSPORTS, useRemotes } from './remotes.js'

const remotes = useRemotes()
const credentials = null
const run = promisify(execFile)

/** An image with a history of `n` snapshots (each changes one file). */
async function history(n: number) {
  const image = await makeImage({ 'a.txt': 'v0', 'b.txt': 'stays' })
  const ids = [image.id]
  for (let i = 1; i < n; i++) {
    await fs.writeFile(join(image.dir, 'a.txt'), `v${i}`)
    ids.push((await snapshotWorkspace({ dir: image.dir, message: `v${i}` })).id)
  }
  return { ...image, ids }
}

describe.each(TRANSPORTS)('packs through %s', (kind) => {
  it('a push sends one pack, reports its progress in bytes, and a later push only what the repository’s packs lack', async () => {
    const image = await makeImage(randomFiles(20, 64 * 1024, 5))
    const remote = remotes.remote(kind)
    const events: TransferProgress[] = []
    const first = await pushImage({ store: image.store, id: image.id, remote, credentials, onProgress: (p) => events.push(p) })
    expect(first).toMatchObject({ packs: 1, sentObjects: first.objects, repacked: false })
    const sending = events.filter((e) => e.phase === 'sending')
    expect(sending.at(-1)!.bytes).toBe(sending.at(-1)!.totalBytes) // bytes of the compressed pack
    expect(events.some((e) => e.phase === 'packing' && e.bytes === first.totalBytes)).toBe(true)
    // another tag of the same repository learns from the packs already there
    const other = remote.replace(/:v1(\?|$)/, ':v2$1')
    const again = await pushImage({ store: image.store, id: image.id, remote: other, credentials })
    expect(again).toMatchObject({ packs: 1, sentObjects: 0 })
    expect(await remotePacks(other)).toEqual(await remotePacks(remote))
  })

  it('does not reuse a pack the image needs little of (its pull would fetch the rest too)', async () => {
    const big = await makeImage({ ...randomFiles(20, 32 * 1024, 21), 'shared.txt': 'in both images' })
    const small = await makeImage({ 'shared.txt': 'in both images', 'own.txt': 'only here' })
    const remote = remotes.remote(kind)
    await pushImage({ store: big.store, id: big.id, remote, credentials })
    const other = remote.replace(/:v1(\?|$)/, ':small$1')
    const pushed = await pushImage({ store: small.store, id: small.id, remote: other, credentials })
    expect(pushed).toMatchObject({ packs: 1, sentObjects: pushed.objects })
    const pulled = await pullImage({ store: await emptyStore(), remote: other, credentials })
    expect(pulled.fetchedBytes).toBeLessThan(8192)
  })

  it(`repacks: --repack sends one pack; past ${REPACK_THRESHOLD} packs a push repacks by itself; pulls still check out`, async () => {
    const image = await makeImage({ 'a.txt': 'start', ...randomFiles(4, 4096, 2) })
    const remote = remotes.remote(kind)
    let pushed = await pushImage({ store: image.store, id: image.id, remote, credentials })
    const counts: number[] = [pushed.packs]
    for (let i = 1; i <= REPACK_THRESHOLD; i++) {
      await fs.writeFile(join(image.dir, 'a.txt'), `change ${i}`)
      const next = await snapshotWorkspace({ dir: image.dir, message: `change ${i}` })
      pushed = await pushImage({ store: image.store, id: next.id, remote, credentials })
      counts.push(pushed.packs)
    }
    expect(counts.slice(0, REPACK_THRESHOLD)).toEqual(Array.from({ length: REPACK_THRESHOLD }, (_, i) => i + 1))
    expect(pushed).toMatchObject({ repacked: true, packs: 2 }) // the biggest pack kept, the rest sent again in one
    const store = await emptyStore()
    expect((await pullImage({ store, remote, credentials })).id).toBe(pushed.id)

    const forced = await pushImage({ store: image.store, id: pushed.id, remote, credentials, repack: true })
    expect(forced).toMatchObject({ repacked: true, packs: 1, sentObjects: forced.objects })
    const fresh = await pullImage({ store: await emptyStore(), remote, credentials })
    expect(fresh).toMatchObject({ id: pushed.id, fetchedObjects: forced.objects })
    expect((await pullImage({ store, remote, credentials })).fetchedObjects).toBe(0) // the repacked image is what the store had
  })

  it('a push that continues the image this store pushed to the tag walks and sends only what changed, and tags the same image a full push would', async () => {
    const image = await makeImage({ 'a.txt': 'v0', ...randomFiles(12, 4096, 31) })
    const remote = remotes.remote(kind)
    expect(await pushImage({ store: image.store, id: image.id, remote, credentials })).toMatchObject({ continued: false, packs: 1 })
    await fs.writeFile(join(image.dir, 'a.txt'), 'v1')
    const v1 = await snapshotWorkspace({ dir: image.dir, message: 'v1' })
    const pushed = await pushImage({ store: image.store, id: v1.id, remote, credentials })
    const whole = await collectImage(image.store, v1.id)
    const before = new Set((await collectImage(image.store, image.id)).objects.map((o) => o.digest))
    const added = whole.objects.filter((o) => !before.has(o.digest))
    expect(pushed).toMatchObject({ continued: true, packs: 2, sentObjects: added.length, objects: whole.objects.length })
    expect(pushed.totalBytes).toBe(whole.objects.reduce((n, o) => n + o.size, 0))
    const full = await pushImage({ store: image.store, id: v1.id, remote: remotes.remote(kind), credentials })
    expect(full).toMatchObject({ continued: false, objects: pushed.objects, totalBytes: pushed.totalBytes })

    const store = await emptyStore()
    expect(await pullImage({ store, remote, credentials })).toMatchObject({ id: v1.id, objects: pushed.objects, totalBytes: pushed.totalBytes })
    const out = join(tempDir('continued'), 'tree')
    await checkout({ store, id: v1.id, into: out })
    expect(await treeListing(out)).toEqual(await treeListing(image.dir))
    expect((await verify({ store })).ok).toBe(true)
  })

  it('a clone or a pull remembers the image, so the next push from that store continues it too', async () => {
    const image = await makeImage({ 'a.txt': 'v0', ...randomFiles(8, 4096, 41) })
    const remote = remotes.remote(kind)
    await pushImage({ store: image.store, id: image.id, remote, credentials })
    const mate = join(tempDir('mate'), 'ws')
    await cloneImage({ remote, into: mate, credentials })
    await fs.writeFile(join(mate, 'a.txt'), 'from the clone')
    const theirs = await snapshotWorkspace({ dir: mate, message: 'theirs' })
    const mateStore = await Store.open(join(mate, '.forkpoint'))
    const fromClone = await pushImage({ store: mateStore, id: theirs.id, remote, credentials })
    expect(fromClone).toMatchObject({ continued: true, objects: (await collectImage(mateStore, theirs.id)).objects.length })
    expect(fromClone.sentObjects).toBeLessThan(6) // the blob, the root tree, the snapshot (and layers it names)

    // the first store pulls that (its walk continues from what it pushed), then pushes on from it
    await pullImage({ store: image.store, remote, credentials })
    await checkout({ dir: image.dir, id: theirs.id, force: true })
    await fs.writeFile(join(image.dir, 'b.txt'), 'back home')
    const ours = await snapshotWorkspace({ dir: image.dir, message: 'ours' })
    const back = await pushImage({ store: image.store, id: ours.id, remote, credentials })
    expect(back).toMatchObject({ continued: true, objects: (await collectImage(image.store, ours.id)).objects.length })
    const store = await emptyStore()
    expect((await pullImage({ store, remote, credentials })).id).toBe(ours.id)
    expect((await log({ store, from: ours.id })).map((e) => e.id)).toEqual([ours.id, theirs.id, image.id])
  })

  /** An image pushed under `base`, and a worker's store that pulled it by digest. */
  async function pulledByDigest(seed: number) {
    const image = await makeImage({ 'a.txt': 'v0', ...randomFiles(8, 4096, seed) })
    const remote = remotes.remote(kind, 'base')
    const at = (reference: string) => remote.replace(':base', reference)
    const base = await pushImage({ store: image.store, id: image.id, remote, credentials })
    const store = await emptyStore()
    await pullImage({ store, remote: at(`@${base.manifest}`), credentials })
    return { image, remote, at, base, store, snapshot: await store.readObject(image.id, 'snapshot') }
  }

  it('a push to a new tag continues `from` an image the store pulled by digest or tag, sending only what lies beyond it', async () => {
    const { image, remote, at, base, store, snapshot } = await pulledByDigest(43)
    const result = (second: number) => store.writeObject({ ...snapshot, parents: [image.id], meta: { message: 'result', createdAt: `2026-11-27T00:00:0${second}.000Z` } })
    expect(await pushImage({ store, id: await result(0), remote: at(':result-0'), credentials })).toMatchObject({ continued: false })
    for (const [n, from] of [base.manifest, 'base'].entries()) {
      if (from === 'base') await pullImage({ store, remote, credentials })
      const id = await result(n + 1)
      const pushed = await pushImage({ store, id, remote: at(`:result-${n + 1}`), from, credentials })
      expect(pushed).toMatchObject({ continued: true, sentObjects: 1 }) // the snapshot alone
      expect((await pullImage({ store: await emptyStore(), remote: at(`:result-${n + 1}`), credentials })).id).toBe(id)
    }
    // a `from` the store never saw: the indexes, as any push
    expect(await pushImage({ store, id: await result(0), remote: at(':result-x'), from: 'nowhere', credentials })).toMatchObject({ continued: false, sentObjects: 0 })
  })

  it('an untagged push sets no tag and remembers nothing; its image pulls by digest; a tag or digest in the remote, or a signing key, is a usage error', async () => {
    const { image, at, base, store, snapshot } = await pulledByDigest(47)
    const id = await store.writeObject({ ...snapshot, parents: [image.id], meta: { message: 'result', createdAt: '2026-11-28T00:00:00.000Z' } })
    const cached = async () => (await fs.readdir(store.path('tmp', 'registry-cache'))).sort() // records to continue, manifests, pack indexes
    const before = await cached()
    const pushed = await pushImage({ store, id, remote: at(''), untagged: true, from: base.manifest, credentials })
    expect(pushed).toMatchObject({ tag: null, continued: true, sentObjects: 1 })
    expect(await (await openTransport(parseRemote(at('')), { credentials })).listTags()).toEqual(['base'])
    expect(await cached()).toEqual(before)
    expect((await pullImage({ store: await emptyStore(), remote: at(`@${pushed.manifest}`), credentials })).id).toBe(id)
    for (const refused of [
      { remote: at(':named') },
      { remote: at(`@${base.manifest}`) }, // a digest would be neither checked nor continued
      { remote: at(''), signingKey: 'signing.pem' }, // a signature is found by a tag of its own
    ])
      await expect(pushImage({ store, id, untagged: true, credentials, ...refused })).rejects.toBeInstanceOf(UsageError)
    expect(await (await openTransport(parseRemote(at('')), { credentials })).listTags()).toEqual(['base'])
  })

  it('learns from the pack indexes instead when the tag moved, the record is damaged, the snapshot does not descend from the tagged image, or that image is shallow', async () => {
    const image = await history(3)
    const remote = remotes.remote(kind)
    const pushOf = (id: string, extra: { depth?: number } = {}) => pushImage({ store: image.store, id, remote, credentials, ...extra })
    await pushOf(image.ids[0]!)
    // another store moves the tag
    const stranger = await makeImage({ 'other.txt': 'someone else' })
    await pushImage({ store: stranger.store, id: stranger.id, remote, credentials })
    expect(await pushOf(image.ids[1]!)).toMatchObject({ continued: false, id: image.ids[1] })
    // a damaged record
    const cache = image.store.path('tmp', 'registry-cache')
    const [record] = (await fs.readdir(cache)).filter((f) => f.startsWith('known-'))
    const bytes = await fs.readFile(join(cache, record!))
    bytes.writeUInt8(bytes[50]! ^ 1, 50)
    await fs.writeFile(join(cache, record!), bytes)
    expect(await pushOf(image.ids[2]!)).toMatchObject({ continued: false, id: image.ids[2] })
    // back to an ancestor, then shallow, then on from the shallow image
    const back = await pushOf(image.ids[1]!)
    expect(back).toMatchObject({ continued: false, objects: (await collectImage(image.store, image.ids[1]!)).objects.length })
    expect(await pushOf(image.ids[2]!, { depth: 1 })).toMatchObject({ continued: false, shallow: [image.ids[2]] })
    await fs.writeFile(join(image.dir, 'a.txt'), 'after the shallow push')
    const next = await snapshotWorkspace({ dir: image.dir, message: 'next' })
    expect(await pushOf(next.id)).toMatchObject({ continued: false, shallow: [] })
    expect(await pushOf(next.id)).toMatchObject({ continued: true, sentObjects: 0 })
    const store = await emptyStore()
    expect((await pullImage({ store, remote, credentials })).id).toBe(next.id)
    expect((await log({ store, from: next.id })).map((e) => e.id)).toEqual([next.id, ...[...image.ids].reverse()])
  })

  it('push --depth sends a shallow image; its pull checks out, logs, verifies and survives gc; a full push later deepens it', async () => {
    const image = await history(3)
    const remote = remotes.remote(kind)
    const shallow = await pushImage({ store: image.store, id: image.ids[2]!, remote, credentials, depth: 1 })
    expect(shallow.shallow).toEqual([image.ids[2]])
    const full = await pushImage({ store: image.store, id: image.ids[2]!, remote: remotes.remote(kind), credentials })
    expect(shallow.objects).toBeLessThan(full.objects)

    const store = await emptyStore()
    const pulled = await pullImage({ store, remote, credentials })
    expect(pulled).toMatchObject({ id: image.ids[2], shallow: [image.ids[2]] })
    expect((await log({ store, from: 'v1' })).map((e) => e.id)).toEqual([image.ids[2]])
    expect((await verify({ store })).ok).toBe(true)
    await gc({ store, prune: 'now' })
    const out = join(tempDir('out'), 'tree')
    await checkout({ store, id: 'v1', into: out })
    expect(await fs.readFile(join(out, 'a.txt'), 'utf8')).toBe('v2')
    // a shallow store can push on what it has
    expect((await pushImage({ store, id: 'v1', remote: remotes.remote(kind), credentials })).objects).toBe(shallow.objects)

    await pushImage({ store: image.store, id: image.ids[2]!, remote, credentials })
    await pullImage({ store, remote, credentials })
    expect((await log({ store, from: 'v1' })).map((e) => e.id)).toEqual([...image.ids].reverse())
    expect((await verify({ store })).ok).toBe(true)
  })
})

describe('resume at pack granularity', () => {
  it('a push interrupted after its pack went up sends no pack the second time', async () => {
    const image = await makeImage(randomFiles(20, 32 * 1024, 11))
    const remote = remotes.remote('oci')
    let refused = 0
    const cutBeforeManifests: typeof fetch = async (input, init) => {
      if (init?.method === 'PUT' && String(input instanceof Request ? input.url : input).includes('/manifests/')) {
        refused++
        throw new TypeError('network connection lost')
      }
      return fetch(input, init)
    }
    await expect(pushImage({ store: image.store, id: image.id, remote, credentials, fetch: cutBeforeManifests })).rejects.toThrow()
    expect(refused).toBeGreaterThan(0)
    const second = await pushImage({ store: image.store, id: image.id, remote, credentials })
    expect(second.sentObjects).toBe(0)
    expect(second.sentBytes).toBeLessThan(4096) // the index and manifests only
    expect((await pullImage({ store: await emptyStore(), remote, credentials })).id).toBe(image.id)
  })
})

describe('pack files are the same packs', () => {
  it('round-trips with --depth, and standard zstd reads the objects out of it', async () => {
    const image = await history(3)
    const file = join(tempDir('packs'), 'image.fpk')
    const packed = await packImage({ store: image.store, id: image.ids[2]!, output: file, depth: 2 })
    expect(packed.shallow).toEqual([image.ids[1]])
    const store = await emptyStore()
    const unpacked = await unpackImage({ store, input: file, tag: 'shipped' })
    expect(unpacked).toMatchObject({ id: image.ids[2], added: packed.objects, shallow: [image.ids[1]] })
    expect((await log({ store, from: 'shipped' })).map((e) => e.id)).toEqual([image.ids[2], image.ids[1]])
    const out = join(tempDir('out'), 'tree')
    await checkout({ store, id: 'shipped', into: out })
    expect(await treeListing(out)).toEqual(await treeListing(image.dir))
    const { stdout } = await run('zstd', ['-dc', file], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 })
    expect(stdout.length).toBe(packed.bytes)
    expect(stdout.includes(Buffer.from('stays'))).toBe(true)
  })
})

describe('how a pack is laid out', () => {
  it('puts the snapshot and trees first, then file contents; a big pack compressed on two threads has the bytes one thread gives', async () => {
    // 24 MiB of incompressible files: past the size where a second thread compresses frames
    const image = await makeImage({ 'a/x.txt': 'x', 'b/c/y.txt': 'y', ...randomFiles(24, 1024 * 1024, 7) })
    const { objects, structured } = await collectImage(image.store, image.id)
    expect(structured.has(image.id)).toBe(true)
    expect(structured.size).toBeGreaterThanOrEqual(5) // the snapshot and the trees /, a/, b/, b/c/
    const file = join(tempDir('pack'), 'pack')
    const pack = await writePack(image.store, objects, file, { structured })
    const order = pack.index.objects.map(([digest]) => digest)
    expect(new Set(order.slice(0, structured.size))).toEqual(structured)
    const sizes = new Map(objects.map((o) => [o.digest, o.size]))
    const raw = Buffer.concat(order.map((digest) => image.store.readSizedSync(digest, sizes.get(digest)!)!))
    const bytes = await fs.readFile(file)
    const oneThread = frameCompressor(3)
    let at = 0
    let start = 0
    for (const [length, size] of pack.index.frames) {
      expect(oneThread.compress(raw.subarray(start, start + size)).equals(bytes.subarray(at, at + length))).toBe(true)
      at += length
      start += size
    }
    expect(at).toBe(bytes.length)
  })
})

describe('a pack built as the walk goes', () => {
  it('has the bytes of a pack written after the walk, structured objects first: fed by the walk, pushed whole or repacked, and as a pack file; a corrupt content is refused (exit 5)', async () => {
    // 18 MB in 2 KiB files: the second thread starts, and frames close, while the walk goes on
    const image = await makeImage(randomFiles(9000, 2048, 17))
    await unpackStore(image.store) // the objects as files, which the second thread reads (and the test damages)
    const { objects, structured } = await collectImage(image.store, image.id)
    const after = await writePack(image.store, objects, join(tempDir('after'), 'pack'), { structured })
    expect(after.threads).toBe(availableParallelism() > 1 ? 2 : 1)
    expect(new Set(after.index.objects.slice(0, structured.size).map(([digest]) => digest))).toEqual(structured)

    const writer = openPackWriter(image.store)
    let turns = 0
    const walked = await collectImage(image.store, image.id, {
      onContent: (digest, size) => {
        const turn = writer.addContent({ digest, size })
        if (turn) turns++
        return turn
      },
    })
    const fed = await writer.finish(
      join(tempDir('fed'), 'pack'),
      walked.objects.filter((o) => walked.structured.has(o.digest)),
    )
    await writer.close()
    if (availableParallelism() > 1) expect(turns).toBeGreaterThan(0) // frames went to the second thread during the walk
    expect(fed.digest).toBe(after.digest)

    const remote = remotes.remote('file')
    await pushImage({ store: image.store, id: image.id, remote, credentials })
    expect(await remotePacks(remote)).toEqual([after.digest])
    const other = await makeImage({ 'other.txt': 'another image in the repository' })
    const repacked = remote.replace(/:v1(\?|$)/, ':re$1')
    await pushImage({ store: other.store, id: other.id, remote: repacked, credentials })
    await pushImage({ store: image.store, id: image.id, remote: repacked, credentials, repack: true })
    expect(await remotePacks(repacked)).toEqual([after.digest])
    const file = join(tempDir('packfile'), 'image.fpk')
    await packImage({ store: image.store, id: image.id, output: file })
    const unpackedInto = await emptyStore()
    expect((await unpackImage({ store: unpackedInto, input: file })).id).toBe(image.id)
    expect((await verify({ store: unpackedInto })).ok).toBe(true)

    const victim = objects.findLast((o) => !structured.has(o.digest))!
    await fs.writeFile(image.store.objectPath(victim.digest), Buffer.alloc(victim.size, 1))
    await expect(pushImage({ store: image.store, id: image.id, remote: repacked, credentials, repack: true })).rejects.toMatchObject({ code: 'DigestMismatchError', exitCode: 5 })
    expect((await fs.readdir(image.store.path('tmp'))).filter((name) => name.includes('pack'))).toEqual([])
  })
})

describe('a pack of many objects, built on two threads', () => {
  it('has the bytes one thread gives, reads objects the store keeps only in a pack, refuses a corrupt or short object file (exit 5), and sends only an object’s own bytes', async () => {
    const image = await makeImage(randomFiles(9000, 48, 13)) // past the object count where a second thread reads
    await unpackStore(image.store) // the objects as files, which the second thread reads (and the test damages)
    const { objects, structured } = await collectImage(image.store, image.id)
    const onOneThread = async (store: Store, file: string) => {
      const pack = await writePack(store, objects, file, { structured })
      const sizes = new Map(objects.map((o) => [o.digest, o.size]))
      const raw = Buffer.concat(pack.index.objects.map(([digest]) => store.readSizedSync(digest, sizes.get(digest)!)!))
      const bytes = await fs.readFile(file)
      const oneThread = frameCompressor(3)
      let [at, start] = [0, 0]
      for (const [length, size] of pack.index.frames) {
        expect(oneThread.compress(raw.subarray(start, start + size)).equals(bytes.subarray(at, at + length))).toBe(true)
        ;[at, start] = [at + length, start + size]
      }
      expect(at).toBe(bytes.length)
      return pack
    }
    const dir = tempDir('many')
    const fromFiles = await onOneThread(image.store, join(dir, 'files.pack'))
    expect(fromFiles.index.frames.length).toBeGreaterThan(1)
    expect(fromFiles.threads).toBe(availableParallelism() > 1 ? 2 : 1) // the worker is built (npm run build) and started

    // a clone keeps the image in one pack of its own: no object files for the second thread to read
    const remote = remotes.remote('file')
    await pushImage({ store: image.store, id: image.id, remote, credentials })
    const cloned = join(tempDir('cloned'), 'ws')
    await cloneImage({ remote, into: cloned, credentials })
    const clonedStore = await Store.open(join(cloned, '.forkpoint'))
    expect(clonedStore.packs.list().length).toBe(1)
    expect(existsSync(clonedStore.objectPath(objects.at(-1)!.digest))).toBe(false)
    const fromPack = await onOneThread(clonedStore, join(dir, 'packed.pack'))
    expect(fromPack.digest).toBe(fromFiles.digest)
    if (availableParallelism() > 1) expect(fromPack.helperFrames).toBeGreaterThan(0) // the second thread reads the store's pack too

    const victim = objects.find((o) => !structured.has(o.digest) && o.size === 48)!
    const victimFile = image.store.objectPath(victim.digest)
    const right = await fs.readFile(victimFile)
    const packOf = () => writePack(image.store, objects, join(dir, 'again.pack'), { structured })
    await fs.writeFile(victimFile, Buffer.alloc(48, 1))
    await expect(packOf()).rejects.toMatchObject({ code: 'DigestMismatchError', exitCode: 5 })
    await fs.writeFile(victimFile, right.subarray(0, 47))
    await expect(packOf()).rejects.toMatchObject({ exitCode: 5 })
    // only the object's own bytes are read, and they are checked: bytes appended to its file are not sent
    await fs.writeFile(victimFile, Buffer.concat([right, Buffer.from('appended')]))
    expect((await packOf()).digest).toBe(fromFiles.digest)
  })
})

describe('what a pull records for the next push', () => {
  it('nothing, when the image’s packs lack an object the store had already (a continued push would never send it)', async () => {
    const image = await makeImage({ 'a.txt': 'a', 'b.txt': 'b' })
    const pulled = { index: sha256('an index'), root: image.id }
    const location = 'file:///elsewhere'
    await rememberPulledImage(image.store, location, 'v1', { ...pulled, held: (d) => d !== sha256('b') })
    expect(await readKnownRemoteImage(image.store, location, 'v1')).toBeNull()
    await rememberPulledImage(image.store, location, 'v1', { ...pulled, held: () => true })
    const known = await readKnownRemoteImage(image.store, location, 'v1')
    expect(known).toMatchObject({ index: pulled.index, root: image.id })
    expect(known!.objects.has(sha256('b'))).toBe(true)
    expect(known!.objects.size).toBe((await collectImage(image.store, image.id)).objects.length)
  })
})

describe('what a push reads of the local image', () => {
  it('does not look for file contents the repository holds already, and refuses contents neither side has (exit 5)', async () => {
    const image = await makeImage({ 'a.txt': 'a', 'b.txt': 'b stays' })
    const remote = remotes.remote('file')
    await pushImage({ store: image.store, id: image.id, remote, credentials })
    await fs.writeFile(join(image.dir, 'a.txt'), 'a2')
    const v2 = await snapshotWorkspace({ dir: image.dir, message: 'v2' })
    await fs.rm(image.store.objectPath(sha256('b stays'))) // gone here, in the repository's pack
    const pushed = await pushImage({ store: image.store, id: v2.id, remote, credentials })
    expect(pushed.sentObjects).toBeLessThan(pushed.objects)
    // sending the whole image again needs every object here
    await expect(pushImage({ store: image.store, id: v2.id, remote, credentials, repack: true })).rejects.toMatchObject({ code: 'StoreCorruptError', exitCode: 5 })
    const store = await emptyStore()
    await pullImage({ store, remote, credentials })
    const out = join(tempDir('out'), 'w')
    await checkout({ store, id: 'v1', into: out })
    expect(await treeListing(out)).toEqual(await treeListing(image.dir))

    await fs.writeFile(join(image.dir, 'c.txt'), 'new here')
    const v3 = await snapshotWorkspace({ dir: image.dir, message: 'v3' })
    await fs.rm(image.store.objectPath(sha256('new here')))
    await expect(pushImage({ store: image.store, id: v3.id, remote, credentials })).rejects.toMatchObject({ code: 'StoreCorruptError', exitCode: 5 })
    await pullImage({ store, remote, credentials }) // the tag still names v2, whole
    expect((await log({ store, from: 'v1', limit: 1 }))[0]!.id).toBe(v2.id)
  })
})

describe('a push that continues an image', () => {
  it('sends nothing for the empty config when the image it continues names it already', async () => {
    const image = await makeImage({ 'a.txt': 'v0', ...randomFiles(4, 4096, 53) })
    const remote = remotes.remote('oci')
    const config = EMPTY_CONFIG.descriptor.digest
    const asked: string[] = []
    const recording: typeof fetch = (input, init) => {
      asked.push(`${init?.method ?? 'GET'} ${input instanceof Request ? input.url : String(input)}`)
      return fetch(input, init)
    }
    await pushImage({ store: image.store, id: image.id, remote, credentials, fetch: recording })
    expect(asked.filter((r) => r.includes(config)).length).toBeGreaterThan(0) // a first push asks about it
    asked.length = 0
    await fs.writeFile(join(image.dir, 'a.txt'), 'v1')
    const v1 = await snapshotWorkspace({ dir: image.dir, message: 'v1' })
    expect(await pushImage({ store: image.store, id: v1.id, remote, credentials, fetch: recording })).toMatchObject({ continued: true })
    expect(asked.filter((r) => r.includes(config))).toEqual([])
    expect(asked.length).toBeGreaterThan(0)
    expect((await pullImage({ store: await emptyStore(), remote, credentials })).id).toBe(v1.id)
  })
})
