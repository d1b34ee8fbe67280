import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { compress } from 'zstd-napi'
import { InvalidPackError, checkout, packImage, unpackImage } from '../../src/index.js'
import { tempDir } from '../helpers/tmp.js'
import { emptyStore, expectRefusedUntouched, makeImage, treeListing } from './fixtures.js'

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

  it('refuses files that are not packs', async () => {
    const notZstd = join(tempDir('pack'), 'junk.fpk')
    await fs.writeFile(notZstd, 'this is not zstd')
    await expectUnpackRefused(notZstd, InvalidPackError)
    const plainZstd = join(tempDir('pack'), 'plain.zst')
    await fs.writeFile(plainZstd, compress(Buffer.from('hi')))
    await expectUnpackRefused(plainZstd, InvalidPackError)
  })
})
