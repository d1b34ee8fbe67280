import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { compress } from 'zstd-napi'
import { describe, expect, it } from 'vitest'
import { DigestMismatchError, InvalidImageError, InvalidPackError, type Store, pullImage, unpackImage } from '../../src/index.js'
import { type Digest, sha256 } from '../../src/objects/digest.js'
import { KEEP_WHOLE_MIN_OBJECTS } from '../../src/registry/transfer/stagePackedObjects.js'
import { buildPackedImage } from '../../src/registry/manifest/imageManifest.js'
import { fileTransport } from '../../src/registry/transport/fileTransport.js'
import { encodeHeader } from '../../src/registry/pack/packFile.js'
import type { PackIndex } from '../../src/store/PackIndex.js'
import { canonicalBytes } from '../../src/util/canonicalJson.js'
import { tempDir } from '../helpers/tmp.js'
import { emptyStore, expectRefusedUntouched, storeState } from './fixtures.js'

/** A one-object image: the object is a structured note, so it is a valid image root. */
const NOTE = Buffer.from('{"kind":"note","schemaVersion":1,"text":"a note long enough to have a middle"}')
const OTHER = Buffer.from('{"kind":"note","schemaVersion":1,"text":"another"}')

interface Forged {
  frames: Buffer[]
  index: PackIndex
  /** Bytes appended after the last frame. */
  trailing?: Buffer
}

/** A pack of NOTE and OTHER in one frame, honest until `lie` changes it. */
function forge(lie: (pack: Forged) => void = () => {}): Forged & { body: Buffer } {
  const raw = Buffer.concat([NOTE, OTHER])
  const frame = compress(raw, { checksumFlag: true })
  const pack: Forged = {
    frames: [frame],
    index: {
      kind: 'pack-index',
      schemaVersion: 1,
      pack: sha256(frame),
      packSize: frame.length,
      frames: [[frame.length, raw.length]],
      objects: [
        [sha256(NOTE), 0, NOTE.length],
        [sha256(OTHER), NOTE.length, OTHER.length],
      ].sort((a, b) => (a[1] as number) - (b[1] as number)) as PackIndex['objects'],
    },
  }
  lie(pack)
  const body = Buffer.concat([...pack.frames, pack.trailing ?? Buffer.alloc(0)])
  return { ...pack, body }
}

async function packFile(pack: Forged & { body: Buffer }): Promise<string> {
  const file = join(tempDir('hostile'), 'image.fpk')
  await fs.writeFile(file, Buffer.concat([encodeHeader({ kind: 'pack', schemaVersion: 2, root: sha256(NOTE), shallow: [], index: pack.index }), pack.body]))
  return file
}

/** The same pack as a remote image in a file:// layout (the pack blob holds exactly `body`). */
async function layoutImage(pack: Forged & { body: Buffer }): Promise<string> {
  const layout = tempDir('layout')
  const transport = fileTransport(layout)
  const dir = tempDir('blobs')
  const put = async (bytes: Buffer) => {
    const file = join(dir, sha256(bytes).slice(7))
    await fs.writeFile(file, bytes)
    await transport.putBlob({ digest: sha256(bytes), size: bytes.length }, file)
    return { digest: sha256(bytes), size: bytes.length }
  }
  const packRef = { ...(await put(pack.body)), size: pack.index.packSize }
  const indexRef = await put(canonicalBytes(pack.index))
  const { index, manifest } = buildPackedImage({
    root: sha256(NOTE),
    packs: [{ pack: { digest: pack.index.pack, size: packRef.size }, index: indexRef }],
    objects: 2,
    bytes: 0,
    shallow: [],
  })
  if (pack.index.pack !== packRef.digest) await fs.rename(join(layout, 'blobs/sha256', packRef.digest.slice(7)), join(layout, 'blobs/sha256', pack.index.pack.slice(7)))
  await transport.putManifest(manifest)
  await transport.putManifest(index, 'v1')
  return `file://${layout}:v1`
}

type Refusal = new (...args: never[]) => Error

/** Both ways in (unpack of a pack file, pull from a layout) refuse the pack with exit 5 and leave the store as it was. */
async function expectBothRefused(pack: Forged & { body: Buffer }, errorClass: Refusal, message: RegExp): Promise<void> {
  const file = await packFile(pack)
  const unpacked = await expectRefusedUntouched((store) => unpackImage({ store, input: file }), errorClass)
  expect(unpacked.error.message).toMatch(message)
  const remote = await layoutImage(pack)
  const pulled = await expectRefusedUntouched((store) => pullImage({ store, remote, credentials: null }), errorClass)
  expect(pulled.error.message).toMatch(message)
}

describe('hostile packs are refused with exit 5 and the store unchanged', () => {
  it('an honest forged pack is accepted both ways (the fixture itself is sound)', async () => {
    const pack = forge()
    const { store } = await expectAccepted(pack)
    expect(await store.has(sha256(NOTE))).toBe(true)
  })

  it('wrong index offsets: an object placed one byte off, a frame length that is not the frame', async () => {
    await expectBothRefused(
      forge((p) => {
        p.index.objects[0]![1] += 1
        p.index.objects[0]![2] -= 1
      }),
      DigestMismatchError,
      /hashes to/,
    )
    // two frames whose lengths the index gets wrong; the store has the first frame's object, so only the second is read, from the wrong place
    const swapped = forge((p) => {
      const a = compress(NOTE, { checksumFlag: true })
      const b = compress(OTHER, { checksumFlag: true })
      p.frames = [a, b]
      p.index.frames = [
        [a.length - 5, NOTE.length],
        [b.length + 5, OTHER.length],
      ]
      p.index.packSize = a.length + b.length
      p.index.pack = sha256(Buffer.concat([a, b]))
    })
    const file = await packFile(swapped)
    const remote = await layoutImage(swapped)
    for (const receive of [(store: Store) => unpackImage({ store, input: file }), (store: Store) => pullImage({ store, remote, credentials: null })]) {
      const store = await emptyStore()
      await store.writeBlob(NOTE)
      const before = await storeState(store)
      const error = await receive(store).then(
        () => null,
        (e: unknown) => e as Error & { exitCode: number },
      )
      expect(error).toBeInstanceOf(InvalidPackError)
      expect(error?.exitCode).toBe(5)
      expect(error?.message).toMatch(/does not decompress/)
      expect(await storeState(store)).toEqual(before)
    }
  })

  it('overlapping entries', async () => {
    await expectBothRefused(
      forge((p) => {
        p.index.objects[1]![1] = NOTE.length - 4
      }),
      InvalidPackError,
      /overlaps/,
    )
  })

  it('an index naming an object the pack does not hold', async () => {
    const absent = sha256('an object that is not in the pack')
    await expectBothRefused(
      forge((p) => {
        p.index.objects[1]![0] = absent
      }),
      DigestMismatchError,
      new RegExp(`${absent} .*hashes to`),
    )
    await expectBothRefused(
      forge((p) => {
        p.index.objects.push([absent, NOTE.length + OTHER.length, 10])
      }),
      InvalidPackError,
      /does not lie inside one frame/,
    )
  })

  it('a pack bigger than declared', async () => {
    await expectBothRefused(
      forge((p) => {
        p.trailing = compress(Buffer.from('more than the index says'))
      }),
      InvalidPackError,
      /bigger than its header declares|not the \d+ its manifest declares/,
    )
  })

  it('a decompression bomb: a frame that decompresses past what it declares stops there; a frame declaring more than the image limit is refused unread', async () => {
    const bomb = compress(Buffer.alloc(64 * 1024 * 1024), { checksumFlag: true })
    expect(bomb.length).toBeLessThan(64 * 1024)
    await expectBothRefused(
      forge((p) => {
        p.frames.push(bomb)
        p.index.frames.push([bomb.length, 1024])
        p.index.packSize += bomb.length
        p.index.pack = sha256(Buffer.concat(p.frames))
        p.index.objects.push([sha256(Buffer.alloc(1024)), NOTE.length + OTHER.length, 1024])
      }),
      InvalidPackError,
      /decompress to more than the \d+ bytes its index declares/,
    )
    const file = await packFile(
      forge((p) => {
        p.index.frames[0]![1] = 2 ** 40
      }),
    )
    const { error } = await expectRefusedUntouched((store) => unpackImage({ store, input: file, limits: { maxImageBytes: 1024 ** 3 } }), InvalidImageError)
    expect(error.message).toMatch(/more than the limit of 1073741824.*FORKPOINT_MAX_IMAGE_BYTES/)
  })
})

async function expectAccepted(pack: Forged & { body: Buffer }) {
  const store = await emptyStore()
  expect((await unpackImage({ store, input: await packFile(pack) })).id).toBe(sha256(NOTE))
  const other = await emptyStore()
  expect((await pullImage({ store: other, remote: await layoutImage(pack), credentials: null })).id).toBe(sha256(NOTE))
  return { store }
}

/** Notes enough for a pull to read the pack whole, on its checking threads (KEEP_WHOLE_MIN_OBJECTS), the first of them NOTE (the root). */
const MANY = [NOTE, ...Array.from({ length: KEEP_WHOLE_MIN_OBJECTS + 40 }, (_, i) => Buffer.from(`{"kind":"note","schemaVersion":1,"text":"note ${i}"}`))]

/** MANY in two frames, honest until `lie` changes the second frame's bytes (given its raw bytes) or the index. */
function forgeWhole(lie: { second?: (raw: Buffer) => Buffer; index?: (index: PackIndex) => void } = {}): Forged & { body: Buffer } {
  const half = MANY.length >> 1
  const first = Buffer.concat(MANY.slice(0, half))
  const second = Buffer.concat(MANY.slice(half))
  const frames = [compress(first, { checksumFlag: true }), compress(lie.second?.(second) ?? second, { checksumFlag: true })]
  let at = 0
  const objects = MANY.map((o): [Digest, number, number] => [sha256(o), (at += o.length) - o.length, o.length])
  const index: PackIndex = {
    kind: 'pack-index',
    schemaVersion: 1,
    pack: '' as Digest,
    packSize: 0,
    frames: [
      [frames[0]!.length, first.length],
      [frames[1]!.length, second.length],
    ],
    objects,
  }
  lie.index?.(index)
  const body = Buffer.concat(frames)
  index.pack = sha256(body)
  index.packSize = body.length
  return { frames, index, body }
}

async function expectPullRefused(pack: Forged & { body: Buffer }, errorClass: Refusal, message: RegExp): Promise<void> {
  const remote = await layoutImage(pack)
  const { error } = await expectRefusedUntouched((store) => pullImage({ store, remote, credentials: null }), errorClass)
  expect(error.message).toMatch(message)
}

describe('a pack read whole, frame by frame on threads of its own, is refused the same way', () => {
  it('an honest one is accepted and kept whole (the fixture reaches that path)', async () => {
    const store = await emptyStore()
    expect((await pullImage({ store, remote: await layoutImage(forgeWhole()), credentials: null })).id).toBe(sha256(NOTE))
    expect(store.packs.list()).toHaveLength(1)
    expect(await store.readBlob(sha256(MANY.at(-1)!))).toEqual(MANY.at(-1))
  })

  it('an object in a later frame that does not hash to its name', async () => {
    const swapped = (raw: Buffer) => Buffer.from(raw.toString('latin1').replace('note 200"', 'note 999"'), 'latin1')
    await expectPullRefused(forgeWhole({ second: swapped }), DigestMismatchError, /hashes to/)
  })

  it('a frame that decompresses to more, or to less, than its index declares, or not at all', async () => {
    await expectPullRefused(
      forgeWhole({ second: (raw) => Buffer.concat([raw, Buffer.alloc(64 * 1024 * 1024)]) }),
      InvalidPackError,
      /frame 1 .*does not decompress as its index declares/,
    )
    await expectPullRefused(forgeWhole({ second: (raw) => raw.subarray(0, raw.length - 1) }), InvalidPackError, /frame 1 .*does not decompress as its index declares/)
    const garbage = forgeWhole()
    const damaged = Buffer.from(garbage.body)
    damaged.fill(0x55, garbage.frames[0]!.length + 4)
    await expectPullRefused({ ...garbage, body: damaged, index: { ...garbage.index, pack: sha256(damaged) } }, InvalidPackError, /frame 1 .*does not decompress/)
  })
})
