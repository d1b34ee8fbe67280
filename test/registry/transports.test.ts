import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { openTransport } from '../../src/registry/transport/openTransport.js'
import { parseRemote } from '../../src/registry/transport/parseRemote.js'
import { sha256 } from '../../src/objects/digest.js'
import { EMPTY_CONFIG, buildPackedImage } from '../../src/registry/manifest/imageManifest.js'
import type { Transport } from '../../src/registry/transport/Transport.js'
import { tempDir } from '../helpers/tmp.js'
import { sharedS3 } from '../helpers/sharedServices.js'
import { TRANSPORTS, useRemotes } from './remotes.js'

const remotes = useRemotes()

/** An image's manifests naming one blob (as its pack and its index: the transport checks neither). */
const imageOf = (blob: { digest: `sha256:${string}`; size: number }) =>
  buildPackedImage({ root: blob.digest, packs: [{ pack: blob, index: blob }], objects: 1, bytes: blob.size, shallow: [] })

async function blobFile(bytes: Buffer): Promise<{ digest: `sha256:${string}`; size: number; path: string }> {
  const path = join(tempDir('blob'), 'b')
  await fs.writeFile(path, bytes)
  return { digest: sha256(bytes), size: bytes.length, path }
}

async function readAll(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = []
  for await (const c of stream) parts.push(Buffer.from(c))
  return Buffer.concat(parts)
}

/** One conformance suite, run against every transport. */
describe.each(TRANSPORTS)('transport %s', (kind) => {
  const open = async (): Promise<Transport> => openTransport(parseRemote(remotes.remote(kind)), { credentials: null })

  it('stores blobs by digest, reports their size, reads them whole and from an offset', async () => {
    const t = await open()
    const bytes = randomBytes(100_000)
    const blob = await blobFile(bytes)
    expect(await t.statBlob(blob.digest)).toBeNull()
    expect(await t.openBlob(blob.digest, 0)).toBeNull()
    let counted = 0
    await t.putBlob(blob, blob.path, { onBytes: (n) => (counted += n) })
    expect(counted).toBe(bytes.length)
    expect(await t.statBlob(blob.digest)).toBe(bytes.length)
    const whole = await t.openBlob(blob.digest, 0)
    expect(whole?.offset).toBe(0)
    expect((await readAll(whole!.body)).equals(bytes)).toBe(true)
    const tail = await t.openBlob(blob.digest, 60_000)
    expect(tail?.offset).toBe(60_000)
    expect((await readAll(tail!.body)).equals(bytes.subarray(60_000))).toBe(true)
    const middle = await t.openBlob(blob.digest, 30_000, { length: 1000 })
    expect(middle!.offset).toBe(30_000) // every transport here serves byte ranges
    expect((await readAll(middle!.body)).equals(bytes.subarray(30_000, 31_000))).toBe(true)
    await t.putBlob(blob, blob.path) // idempotent
    expect(await t.statBlob(blob.digest)).toBe(bytes.length)
  })

  it('moves blobs larger than one chunk (chunked upload on OCI)', async () => {
    const t = await open()
    const bytes = randomBytes(20 * 1024 * 1024 + 123)
    const blob = await blobFile(bytes)
    await t.putBlob(blob, blob.path)
    expect(await t.statBlob(blob.digest)).toBe(bytes.length)
    expect(sha256(await readAll((await t.openBlob(blob.digest, 0))!.body))).toBe(blob.digest)
  })

  it('stores manifests by digest and by tag, lists and moves tags', async () => {
    const t = await open()
    const object = await blobFile(Buffer.from('{"kind":"note","schemaVersion":1}'))
    await t.putBlob(object, object.path)
    const config = await blobFile(EMPTY_CONFIG.bytes)
    await t.putBlob(config, config.path)
    const one = imageOf(object)
    expect(await t.getManifest(one.manifest.descriptor.digest)).toBeNull()
    await t.putManifest(one.manifest)
    expect((await t.getManifest(one.manifest.descriptor.digest))?.bytes.equals(one.manifest.bytes)).toBe(true)
    await t.putManifest(one.index, 'first')
    await t.putManifest(one.index, 'second')
    expect(await t.listTags()).toEqual(['first', 'second'])
    const byTag = await t.getManifest('first')
    expect(byTag?.bytes.equals(one.index.bytes)).toBe(true)
    expect(byTag?.claimed ?? one.index.descriptor.digest).toBe(one.index.descriptor.digest)
    expect((await t.getManifest(one.index.descriptor.digest))?.bytes.equals(one.index.bytes)).toBe(true)
    expect(await t.getManifest('missing')).toBeNull()

    const other = await blobFile(Buffer.from('{"kind":"note","schemaVersion":2}'))
    await t.putBlob(other, other.path)
    const two = imageOf(other)
    await t.putManifest(two.manifest)
    await t.putManifest(two.index, 'first')
    expect((await t.getManifest('first'))?.bytes.equals(two.index.bytes)).toBe(true)
    expect(await t.listTags()).toEqual(['first', 'second'])
  })
})

it('an s3:// remote that names no endpoint goes to FORKPOINT_S3_ENDPOINT, which the S3 transport reads, not parseRemote', async () => {
  const s3 = sharedS3()
  const spec = `s3://${s3.bucket}/endpoint-${randomBytes(4).toString('hex')}:v1`
  const named = `${spec}?endpoint=${encodeURIComponent(s3.endpoint)}`
  const blob = await blobFile(randomBytes(1000))
  vi.stubEnv('FORKPOINT_S3_ENDPOINT', s3.endpoint)
  try {
    const remote = parseRemote(spec)
    expect(remote.transport === 's3' && remote.options).toEqual({})
    await (await openTransport(remote, { credentials: null })).putBlob(blob, blob.path)
  } finally {
    vi.unstubAllEnvs()
  }
  expect(await (await openTransport(parseRemote(named), { credentials: null })).statBlob(blob.digest)).toBe(1000)
})
