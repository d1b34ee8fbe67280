import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { CorruptDataError, InvalidPackError, packImage, unpackImage } from '../../src/index.js'
import { fp } from '../helpers/cli.js'
import { tempDir } from '../helpers/tmp.js'
import { emptyStore, expectRefusedUntouched, makeImage, randomFiles } from './fixtures.js'

/** A real pack of several incompressible objects, large enough to span many zstd blocks. */
let pack: Buffer
let objects: number
beforeAll(async () => {
  const image = await makeImage({ ...randomFiles(6, 150_000), 'note.txt': 'hello' })
  const packed = await packImage({ store: image.store, id: image.id, output: join(tempDir('pack'), 'good.fpk') })
  pack = await fs.readFile(packed.output)
  objects = packed.objects
})

async function writeVariant(name: string, bytes: Buffer): Promise<string> {
  const file = join(tempDir('pack'), name)
  await fs.writeFile(file, bytes)
  return file
}

async function expectRefusedNothingStaged(file: string, errorClass: new (...args: never[]) => Error): Promise<Error> {
  const { error, store } = await expectRefusedUntouched((store) => unpackImage({ store, input: file }), errorClass)
  expect(await fs.readdir(store.path('tmp'))).toEqual([])
  return error
}

describe('a truncated or damaged pack', () => {
  it('is refused with exit 5 at every cut point, the store unchanged', async () => {
    const steps = 30
    const cuts = new Set([0, 1, 4, 100, 511, 512, 1024, pack.length - 1, pack.length - 8])
    for (let i = 1; i < steps; i++) cuts.add(Math.floor((pack.length * i) / steps))
    for (const cut of [...cuts].sort((a, b) => a - b)) {
      const error = await expectRefusedNothingStaged(await writeVariant(`cut-${cut}.fpk`, pack.subarray(0, cut)), InvalidPackError)
      expect(error.message, `cut at ${cut}`).toMatch(/truncated|damaged|not a forkpoint pack|holds no/)
    }
  })

  it('is refused with exit 5 when any byte is changed', async () => {
    for (let i = 0; i < 12; i++) {
      const at = Math.floor((pack.length * (i + 0.5)) / 12)
      const damaged = Buffer.from(pack)
      damaged[at] = damaged[at]! ^ 0x40
      await expectRefusedNothingStaged(await writeVariant(`flip-${at}.fpk`, damaged), CorruptDataError)
    }
  })

  it('the intact pack still unpacks', async () => {
    const store = await emptyStore()
    expect((await unpackImage({ store, input: await writeVariant('whole.fpk', pack) })).added).toBe(objects)
  })

  it('forkpoint unpack of a cut pack exits 5 naming the problem', async () => {
    const dir = tempDir('recv')
    expect((await fp(dir, 'init')).code).toBe(0)
    const file = await writeVariant('half.fpk', pack.subarray(0, Math.floor(pack.length / 2)))
    const r = await fp(dir, 'unpack', file)
    expect(r.code).toBe(5)
    expect(r.stderr).toContain(`${file} is not a valid pack (truncated or damaged)`)
    expect(await fs.readdir(join(dir, '.forkpoint', 'refs', 'tags'))).toEqual([])
  })
})
