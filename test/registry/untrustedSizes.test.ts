import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { InvalidImageError, InvalidPackError, UnsafePathError, pullImage, pushImage, unpackImage } from '../../src/index.js'
import { fp, runCli } from '../helpers/cli.js'
import { tempDir } from '../helpers/tmp.js'
import { emptyStore, expectRefusedUntouched, makeImage, onePackFile, remotePacks } from './fixtures.js'
import { useRemotes } from './remotes.js'

const remotes = useRemotes()
const credentials = null

async function pushedLayout(): Promise<{ remote: string; layout: string; manifest: string }> {
  const image = await makeImage({ 'a.txt': 'alpha' })
  const remote = remotes.remote('file')
  const pushed = await pushImage({ store: image.store, id: image.id, remote, credentials })
  return { remote, layout: remote.slice('file://'.length, remote.lastIndexOf(':')), manifest: pushed.manifest }
}

const expectPullRefused = (remote: string, errorClass: new (...args: never[]) => Error, limits = {}) =>
  expectRefusedUntouched((store) => pullImage({ store, remote, credentials, limits }), errorClass)

describe('a file:// layout is read without following symlinks', () => {
  it('refuses an index.json that is a symlink to /dev/zero (exit 5, at once)', async () => {
    const { remote, layout } = await pushedLayout()
    await fs.rm(join(layout, 'index.json'))
    await fs.symlink('/dev/zero', join(layout, 'index.json'))
    const { error } = await expectPullRefused(remote, UnsafePathError)
    expect(error.message).toContain('index.json is a symlink')
  })

  it('refuses a manifest or a blob that is a symlink, and a manifest that is not a regular file', async () => {
    const { layout, manifest } = await pushedLayout()
    const blob = join(layout, 'blobs/sha256', manifest.slice(7))
    await fs.rm(blob)
    await fs.symlink('/dev/zero', blob)
    await expectPullRefused(`file://${layout}@${manifest}`, UnsafePathError)
    await fs.rm(blob)
    await fs.mkdir(blob)
    await expectPullRefused(`file://${layout}@${manifest}`, InvalidImageError)

    const other = await pushedLayout()
    const [pack] = await remotePacks(other.remote)
    const object = join(other.layout, 'blobs/sha256', pack!.slice(7))
    await fs.rm(object)
    await fs.symlink('/etc/hostname', object)
    await expectPullRefused(other.remote, UnsafePathError)
  })

  it('caps index.json and manifests at 4 MiB by default, overridable', async () => {
    const { remote, layout } = await pushedLayout()
    const index = await fs.readFile(join(layout, 'index.json'), 'utf8')
    await fs.writeFile(join(layout, 'index.json'), index + ' '.repeat(5 * 1024 * 1024))
    const { error } = await expectPullRefused(remote, InvalidImageError)
    expect(error.message).toMatch(/larger than 4194304 bytes.*FORKPOINT_MAX_MANIFEST_BYTES/)
    expect((await pullImage({ store: await emptyStore(), remote, credentials, limits: { maxManifestBytes: 8 * 1024 * 1024 } })).objects).toBe(3)
  })
})

describe('registry and S3 responses are capped the same way', () => {
  it.each(['oci', 's3'] as const)('%s: a manifest above the cap and an image above the size caps are refused', async (kind) => {
    const image = await makeImage({ 'a.txt': 'alpha', 'b.txt': 'a somewhat longer file' })
    const remote = remotes.remote(kind)
    await pushImage({ store: image.store, id: image.id, remote, credentials })
    await expectPullRefused(remote, InvalidImageError, { maxManifestBytes: 100 })
    const { error } = await expectPullRefused(remote, InvalidImageError, { maxObjectBytes: 10 })
    expect(error.message).toContain('FORKPOINT_MAX_OBJECT_BYTES')
    await expectPullRefused(remote, InvalidImageError, { maxImageBytes: 20 })
  })
})

describe('a pack decompresses no further than it declares', () => {
  it('refuses a pack whose frame goes on past what its index declares (a decompression bomb), store untouched', async () => {
    const file = await onePackFile(Buffer.from('{"kind":"note","schemaVersion":1}'), Buffer.alloc(64 * 1024 * 1024))
    expect((await fs.stat(file)).size).toBeLessThan(100 * 1024)
    const { error } = await expectRefusedUntouched((store) => unpackImage({ store, input: file }), InvalidPackError)
    expect(error.message).toContain('decompress to more than')
  })

  it('refuses an object or image larger than the limits before writing it, and the limits are overridable', async () => {
    const file = await onePackFile(Buffer.from(`{"kind":"note","schemaVersion":1,"pad":"${'x'.repeat(2000)}"}`))
    const { error } = await expectRefusedUntouched((store) => unpackImage({ store, input: file, limits: { maxImageBytes: 1024 } }), InvalidImageError)
    expect(error.message).toContain('FORKPOINT_MAX_IMAGE_BYTES')
    await expectRefusedUntouched((store) => unpackImage({ store, input: file, limits: { maxPackManifestBytes: 50 } }), InvalidPackError)
    expect((await unpackImage({ store: await emptyStore(), input: file })).added).toBe(1)
  })

  it('forkpoint unpack takes the limits from the environment (exit 5 above them, exit 2 for a bad value)', async () => {
    const file = await onePackFile(Buffer.from(`{"kind":"note","schemaVersion":1,"pad":"${'x'.repeat(2000)}"}`))
    const dir = tempDir('recv')
    expect((await fp(dir, 'init')).code).toBe(0)
    const capped = await runCli(['unpack', file], { cwd: dir, env: { FORKPOINT_MAX_OBJECT_BYTES: '1K' } })
    expect(capped.code).toBe(5)
    expect(capped.stderr).toContain('more than the limit of 1024')
    expect((await runCli(['unpack', file], { cwd: dir, env: { FORKPOINT_MAX_OBJECT_BYTES: 'lots' } })).code).toBe(2)
    expect((await runCli(['unpack', file], { cwd: dir, env: { FORKPOINT_MAX_OBJECT_BYTES: '4K' } })).code).toBe(0)
  })
})
