import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CorruptDataError, DigestMismatchError, InvalidImageError, InvalidPackError, UnsafePathError, pullImage, pushImage, type Digest, type Store } from '../../src/index.js'
import { makeSnapshot } from '../../src/objects/Snapshot.js'
import { makeTree } from '../../src/objects/Tree.js'
import { sha256 } from '../../src/objects/digest.js'
import { collectImage } from '../../src/registry/transfer/collectImage.js'
import { fileTransport } from '../../src/registry/transport/fileTransport.js'
import { buildPackedImage } from '../../src/registry/manifest/imageManifest.js'
import { writePack } from '../../src/registry/pack/writePack.js'
import type { BlobRef } from '../../src/registry/manifest/Descriptor.js'
import { tempDir } from '../helpers/tmp.js'
import { emptyStore, expectRefusedUntouched, makeImage, remotePacks } from './fixtures.js'
import { useRemotes } from './remotes.js'

const remotes = useRemotes({ damagesBlobs: true })
const credentials = null

/** Pull into a fresh store and expect a refusal (exit 5) that leaves it as it was. */
async function expectRefused(remote: string, errorClass: new (...args: never[]) => Error): Promise<Error> {
  return (await expectRefusedUntouched((store) => pullImage({ store, remote, credentials }), errorClass)).error
}

/** Put a pack of `objects` and an image naming it as tag `forged` into a layout, by hand; returns the index digest. */
async function pushForged(store: Store, layout: string, root: Digest, objects: BlobRef[]): Promise<Digest> {
  const transport = fileTransport(layout)
  const file = join(tempDir('forged'), 'pack')
  const pack = await writePack(store, objects, file)
  await transport.putBlob({ digest: pack.digest, size: pack.size }, file)
  const indexFile = `${file}.index`
  await fs.writeFile(indexFile, pack.indexBytes)
  const index = { digest: sha256(pack.indexBytes), size: pack.indexBytes.length }
  await transport.putBlob(index, indexFile)
  const built = buildPackedImage({ root, packs: [{ pack: { digest: pack.digest, size: pack.size }, index }], objects: objects.length, bytes: 0, shallow: [] })
  await transport.putManifest(built.manifest)
  await transport.putManifest(built.index, 'forged')
  return built.index.descriptor.digest
}

async function pushedToRegistry(files: Record<string, string>) {
  const image = await makeImage(files)
  const remote = remotes.remote('oci')
  const pushed = await pushImage({ store: image.store, id: image.id, remote, credentials })
  return { image, remote, pushed }
}

describe('pulled data is untrusted', () => {
  it('refuses a tampered pack in the registry (exit 5, store untouched)', async () => {
    const { remote } = await pushedToRegistry({ 'secret.txt': 'the original content', 'other.txt': 'x' })
    const [pack] = await remotePacks(remote)
    const data = remotes.registry().blobDataPath(pack!)
    const bytes = await fs.readFile(data)
    const at = Math.floor(bytes.length / 2)
    bytes[at] = bytes[at]! ^ 0x40
    await fs.writeFile(data, bytes)
    const error = await expectRefused(remote, CorruptDataError)
    expect(error.message).toContain(pack)
  })

  it('refuses a truncated pack in the registry', async () => {
    const content = 'a fairly long file body that will be cut short'.repeat(100)
    const { remote } = await pushedToRegistry({ 'long.txt': content })
    const [pack] = await remotePacks(remote)
    await fs.truncate(remotes.registry().blobDataPath(pack!), 40)
    const error = await expectRefused(remote, InvalidPackError)
    expect(error.message).toMatch(/truncated|not the \d+ its manifest declares/)
  })

  it('refuses a manifest whose bytes do not match its digest (by tag and by digest)', async () => {
    const image = await makeImage({ 'a.txt': 'a' })
    const remote = remotes.remote('file')
    const pushed = await pushImage({ store: image.store, id: image.id, remote, credentials })
    const layout = remote.slice('file://'.length, remote.lastIndexOf(':'))
    const blob = join(layout, 'blobs/sha256', pushed.manifest.slice(7))
    const original = await fs.readFile(blob, 'utf8')
    await fs.writeFile(blob, original.replace('"dev.forkpoint.objects":"', '"dev.forkpoint.objects":"9'))
    await expectRefused(remote, DigestMismatchError)
    const impostor = sha256('an image nobody pushed')
    await fs.writeFile(join(layout, 'blobs/sha256', impostor.slice(7)), original)
    await expectRefused(`file://${layout}@${impostor}`, DigestMismatchError)
  })

  it('refuses a manifest that names a pack the remote does not have', async () => {
    const image = await makeImage({ 'a.txt': 'a', 'b.txt': 'b' })
    const remote = remotes.remote('file')
    await pushImage({ store: image.store, id: image.id, remote, credentials })
    const layout = remote.slice('file://'.length, remote.lastIndexOf(':'))
    const [pack] = await remotePacks(remote)
    await fs.rm(join(layout, 'blobs/sha256', pack!.slice(7)))
    const error = await expectRefused(remote, InvalidImageError)
    expect(error.message).toContain(pack)
  })

  it('refuses an image whose packs leave out an object its trees need', async () => {
    const image = await makeImage({ 'a.txt': 'a', 'b.txt': 'b' })
    const remote = remotes.remote('file')
    const pushed = await pushImage({ store: image.store, id: image.id, remote, credentials })
    const layout = remote.slice('file://'.length, remote.lastIndexOf(':'))
    const objects = (await collectImage(image.store, image.id)).objects.filter((o) => o.digest !== sha256('b'))
    const forged = await pushForged(image.store, layout, image.id, objects)
    expect(forged).not.toBe(pushed.manifest)
    const error = await expectRefused(`file://${layout}:forged`, InvalidImageError)
    expect(error.message).toMatch(/neither in the image nor in the local store/)
  })

  it('refuses a tree with a symlink escaping the workspace, unless allowed', async () => {
    const image = await makeImage({ 'a.txt': 'a' })
    const tree = await image.store.writeObject({ ...makeTree([{ name: 'escape', type: 'symlink', mode: 0o777, size: 16, target: '../../etc/passwd' }]) })
    const root = await image.store.writeObject({ ...makeTree([{ name: 'sub', type: 'dir', mode: 0o755, size: 0, tree }]) })
    const id = await image.store.writeObject(makeSnapshot({ parents: [], tree: root, message: 'hostile' }))
    for (const kind of ['file', 'oci'] as const) {
      const remote = remotes.remote(kind)
      await pushImage({ store: image.store, id, remote, credentials })
      const error = await expectRefused(remote, UnsafePathError)
      expect(error.message).toContain('sub/escape -> ../../etc/passwd')
      const store = await emptyStore()
      expect((await pullImage({ store, remote, credentials, allowExternalSymlinks: true })).id).toBe(id)
    }
  })

  it('refuses a symlink that climbs out through the tree’s own links (a -> ., c -> a/a/../../etc), as the kernel would walk it', async () => {
    const image = await makeImage({ 'a.txt': 'a' })
    const link = (name: string, target: string) => ({ name, type: 'symlink' as const, mode: 0o777 as const, size: Buffer.byteLength(target), target })
    const root = await image.store.writeObject({ ...makeTree([link('a', '.'), link('c', 'a/a/a/a/a/a/a/a/../../../../../../../../etc')]) })
    const id = await image.store.writeObject(makeSnapshot({ parents: [], tree: root, message: 'hostile' }))
    const remote = remotes.remote('file')
    await pushImage({ store: image.store, id, remote, credentials })
    const error = await expectRefused(remote, UnsafePathError)
    expect(error.message).toContain('c -> a/a/a/a/a/a/a/a/../../../../../../../../etc')
  })

  it('refuses a tree with a path-traversal name', async () => {
    const image = await makeImage({ 'a.txt': 'a' })
    const blob = await image.store.writeBlob(Buffer.from('pwned'))
    const bad = await image.store.writeObject({ kind: 'tree', schemaVersion: 1, entries: [{ name: '..', type: 'file', mode: 0o644, size: 5, blob }] })
    const id = await image.store.writeObject(makeSnapshot({ parents: [], tree: bad, message: 'hostile' }))
    const remote = remotes.remote('file')
    await pushImage({ store: image.store, id, remote, credentials })
    const error = await expectRefused(remote, UnsafePathError)
    expect(error.message).toContain('unsafe name ".."')
  })
})
