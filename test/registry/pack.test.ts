import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DigestMismatchError, InvalidImageError, InvalidPackError, UnsafePathError, checkout, packImage, unpackImage } from '../../src/index.js'
import { sha256 } from '../../src/store/digest.js'
import { canonicalBytes } from '../../src/util/canonicalJson.js'
import { tempDir } from '../helpers/tmp.js'
import { type Entry, emptyStore, expectRefusedUntouched, makeImage, treeListing, writePack } from './fixtures.js'

const manifestEntry = (objects: Array<{ digest: string; size: number }>, root = objects[0]!.digest): Entry => ({
  path: 'forkpoint-pack.json',
  body: canonicalBytes({ kind: 'pack', schemaVersion: 1, root, objects }),
})

async function expectUnpackRefused(file: string, errorClass: new (...args: never[]) => Error): Promise<Error> {
  const { error, store } = await expectRefusedUntouched((store) => unpackImage({ store, input: file }), errorClass)
  expect(await fs.readdir(store.path('tmp'))).toEqual([]) // nothing left staged
  return error
}

describe('pack and unpack', () => {
  it('writes the same bytes for the same image and round-trips it', async () => {
    const image = await makeImage({ 'a.txt': 'alpha', 'x/run.sh': { content: 'echo hi\n', mode: 0o755 }, 'x/l': { symlink: 'run.sh' } })
    const dir = tempDir('packs')
    const one = await packImage({ store: image.store, id: image.id, output: join(dir, 'one.fpk') })
    const two = await packImage({ store: image.store, id: 'HEAD', output: join(dir, 'two.fpk') })
    expect((await fs.readFile(one.output)).equals(await fs.readFile(two.output))).toBe(true)
    expect(one).toMatchObject({ id: image.id, objects: 5 }) // 2 blobs, 2 trees, the snapshot

    const store = await emptyStore()
    const result = await unpackImage({ store, input: one.output, tag: 'shipped' })
    expect(result).toMatchObject({ id: image.id, tag: 'shipped', objects: 5, added: 5 })
    const out = join(tempDir('out'), 'tree')
    await checkout({ store, id: 'shipped', into: out })
    expect(await treeListing(out)).toEqual(await treeListing(image.dir))
    expect((await unpackImage({ store, input: one.output, tag: 'shipped' })).added).toBe(0)
  })

  it('refuses path traversal and absolute names', async () => {
    const body = Buffer.from('x')
    const objects = [{ digest: sha256(body), size: 1 }]
    for (const path of ['../evil', '/etc/evil', 'objects/sha256/../../evil']) {
      const error = await expectUnpackRefused(await writePack([manifestEntry(objects), { path, body }]), UnsafePathError)
      expect(error.message).toContain('not an object name')
    }
  })

  it('refuses links and directories', async () => {
    const objects = [{ digest: sha256('x'), size: 1 }]
    const hex = sha256('x').slice(7)
    await expectUnpackRefused(await writePack([manifestEntry(objects), { path: `objects/sha256/${hex}`, type: 'SymbolicLink', linkpath: '/etc/passwd' }]), UnsafePathError)
    await expectUnpackRefused(await writePack([manifestEntry(objects), { path: `objects/sha256/${hex}`, type: 'Link', linkpath: '/etc/passwd' }]), UnsafePathError)
    await expectUnpackRefused(await writePack([manifestEntry(objects), { path: 'objects/', type: 'Directory' }]), UnsafePathError)
  })

  it('refuses oversized entries, entries not in the manifest and tampered objects', async () => {
    const body = Buffer.from('{"kind":"note","schemaVersion":1}')
    const hex = sha256(body).slice(7)
    const objects = [{ digest: sha256(body), size: body.length }]
    const big = Buffer.alloc(body.length + 10, 1)
    await expectUnpackRefused(await writePack([manifestEntry(objects), { path: `objects/sha256/${hex}`, body: big }]), InvalidPackError)
    await expectUnpackRefused(await writePack([manifestEntry(objects), { path: `objects/sha256/${sha256('other').slice(7)}`, body: Buffer.from('other') }]), InvalidPackError)
    const tampered = Buffer.from(body.toString().replace('note', 'nope'))
    await expectUnpackRefused(await writePack([manifestEntry(objects), { path: `objects/sha256/${hex}`, body: tampered }]), DigestMismatchError)
    const store = await emptyStore()
    await expect(
      unpackImage({ store, input: await writePack([manifestEntry(objects), { path: `objects/sha256/${hex}`, body }]), limits: { maxObjectBytes: 8 } }),
    ).rejects.toBeInstanceOf(InvalidImageError)
    expect((await unpackImage({ store, input: await writePack([manifestEntry(objects), { path: `objects/sha256/${hex}`, body }]) })).id).toBe(sha256(body))
  })

  it('refuses files that are not packs', async () => {
    const notZstd = join(tempDir('pack'), 'junk.fpk')
    await fs.writeFile(notZstd, 'this is not zstd')
    await expectUnpackRefused(notZstd, InvalidPackError)
    await expectUnpackRefused(await writePack([{ path: 'README', body: Buffer.from('hi') }]), InvalidPackError)
  })
})
