import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  type Digest,
  MalformedTensorFileError,
  checkout,
  checkoutAgent,
  cloneImage,
  decodeFloats,
  mergeImages,
  parseSafetensors,
  pushImage,
  snapshotAgent,
  writeSafetensors,
} from '../../../src/index.js'
import { readRef, updateRef } from '../../../src/store/refs.js'
import { readChunks, readSnapshot } from '../../../src/world/tree/readObjects.js'
import { mergeModelLayers } from '../../../src/image/model/mergeModels.js'
import { modelFiles, readFileBytes, readModelLayer, storeTensorFile } from '../../../src/image/model/modelLayer.js'
import { fp } from '../../helpers/cli.js'
import { tempDir } from '../../helpers/tmp.js'
import { storeWorkspace } from '../../helpers/workspace.js'

const CONFIG = '{"r": 4, "lora_alpha": 8}\n'

/** An adapter directory: adapter_model.safetensors with tensors `w` (F32), `h` (BF16), `keep` and `extra`, and its config. */
function adapter(w: number[], h: number[], extra = [0, 0]): string {
  const dir = tempDir('adapter')
  const keep = Float32Array.from({ length: 300_000 }, (_, i) => Math.sin(i)) // 1.2 MB that no side changes
  writeFileSync(
    join(dir, 'adapter_model.safetensors'),
    writeSafetensors(
      [
        { name: 'w', dtype: 'F32', shape: [2, 2], values: Float32Array.from(w) },
        { name: 'h', dtype: 'BF16', shape: [2], values: Float32Array.from(h) },
        { name: 'keep', dtype: 'F32', shape: [300_000], values: keep },
        { name: 'extra', dtype: 'F32', shape: [2], values: Float32Array.from(extra) },
      ],
      { format: 'pt' },
    ),
  )
  mkdirSync(join(dir, 'nested'))
  writeFileSync(join(dir, 'adapter_config.json'), CONFIG)
  writeFileSync(join(dir, 'nested', 'notes.txt'), 'tokenizer notes\n')
  return dir
}

function tensor(bytes: Buffer, name: string): number[] {
  const t = parseSafetensors(bytes, 'merged').tensors.find((x) => x.name === name)!
  return [...decodeFloats(bytes.subarray(t.begin, t.end), t.dtype as 'F32')]
}

/** base, then `other` (theirs) and `main` (ours) each changing the adapter; every image with a cache layer of its own. */
async function divergedAdapters() {
  const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n' })
  // a cache layer object of its own per image (its state an empty chunks object: no llama.cpp here)
  const state = await store.writeObject({ kind: 'chunks', schemaVersion: 1, size: 0, chunks: [] })
  const cache = (text: string) =>
    store.writeObject({ kind: 'kv-cache', schemaVersion: 1, modelSha256: '0'.repeat(64), contextSize: 64, tokens: [...Buffer.from(text)], pending: [], state })
  const base = (await snapshotAgent({ dir, model: adapter([1, 1, 1, 1], [1, 1]), layers: { cache: await cache('kv 0') }, message: 'base', allowEmpty: true })).id
  await updateRef({ store, name: 'refs/heads/other', id: base, message: 'branch' })
  await checkout({ dir, id: 'other' })
  const theirs = (await snapshotAgent({ dir, model: adapter([3, 2, 1, 1.5], [1, 3], [5, 6]), layers: { cache: await cache('kv theirs') }, message: 'theirs', allowEmpty: true })).id
  await checkout({ dir, id: 'main' })
  const ours = (await snapshotAgent({ dir, model: adapter([2, -1, 4, 1.5], [2, 1]), layers: { cache: await cache('kv ours') }, message: 'ours', allowEmpty: true })).id
  return { dir, store, base, ours, theirs }
}

describe('the model layer', () => {
  it('snapshot --model stores an adapter tensor by tensor; checkoutAgent writes every file back identical', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n' })
    const first = adapter([1, 2, 3, 4], [1, 2])
    const one = await snapshotAgent({ dir, model: first, message: 'one', allowEmpty: true })
    const second = adapter([1, 2, 3, 5], [1, 2])
    const two = await snapshotAgent({ dir, model: second, message: 'two', allowEmpty: true })

    const pieces = async (id: Digest) => {
      const files = await modelFiles(store, (await readModelLayer(store, (await readSnapshot(store, id)).model!)).tree)
      const entry = files.get('adapter_model.safetensors')!
      return (await readChunks(store, 'chunks' in entry ? entry.chunks : (null as never))).chunks.map((c) => c.blob)
    }
    const [a, b] = [await pieces(one.id), await pieces(two.id)]
    // header, w, h, keep (1.2 MB in one piece), extra: only w's piece differs (the header's offsets are the same)
    expect(a).toHaveLength(5)
    expect(a.filter((d) => !b.includes(d))).toHaveLength(1)

    const out = join(tempDir('agent'), 'out')
    const result = await checkoutAgent({ dir, id: two.id, into: out })
    expect(result.written).toContain('model/')
    for (const file of ['adapter_model.safetensors', 'adapter_config.json', 'nested/notes.txt'])
      expect(readFileSync(join(out, 'model', file))).toEqual(readFileSync(join(second, file)))
  })

  it('refuses a malformed safetensors file (exit 5) and writes no snapshot', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n' })
    const model = tempDir('adapter')
    writeFileSync(join(model, 'adapter_model.safetensors'), Buffer.from([16, 0, 0, 0, 0, 0, 0, 0, 123]))
    const cli = await fp(dir, 'snapshot', '--model', model, '--allow-empty')
    expect(cli.code).toBe(5)
    expect(cli.stderr).toContain('adapter_model.safetensors')
    expect(await readRef(store, 'HEAD')).toBeNull()
    await expect(snapshotAgent({ dir, model, allowEmpty: true })).rejects.toBeInstanceOf(MalformedTensorFileError)
  })

  it('a merge: without --model-merge both sides changing the adapter is a conflict; with it the tensors merge and the cache is dropped', async () => {
    const h = await divergedAdapters()
    const plain = await mergeImages({ dir: h.dir, ours: h.ours, theirs: h.theirs })
    expect(plain.outcome).toBe('conflict')
    expect(plain.layers.find((l) => l.layer === 'model')!.summary).toBe('model: conflict (adapter_model.safetensors; pass --model-merge linear|ties|dare|dare-ties)')

    const cli = await fp(h.dir, 'merge', 'other', '--model-merge', 'ties', '--density', '1', '--weights', '1,1')
    expect(cli.code).toBe(0)
    expect(cli.stdout).toContain('model: merged with ties (2 tensors in 1 file combined)')
    expect(cli.stdout).toContain('cache: dropped')
    const merged = await readSnapshot(h.store, (await readRef(h.store, 'HEAD'))!)
    expect(merged.cache).toBeUndefined()
    const out = join(tempDir('agent'), 'out')
    await checkoutAgent({ dir: h.dir, id: 'HEAD', into: out })
    const bytes = readFileSync(join(out, 'model', 'adapter_model.safetensors'))
    // ties on w: τ ours [1,-2,3,0.5], theirs [2,1,0,0.5] -> [1.5, -2, 3, 0.5] (index 2: only ours agrees)
    expect(tensor(bytes, 'w')).toEqual([2.5, -1, 4, 1.5])
    // h (BF16): τ ours [1,0], theirs [0,2] -> [1, 2] on the base [1,1], written in BF16
    expect(tensor(bytes, 'h')).toEqual([2, 3])
    expect(parseSafetensors(bytes, 'm').tensors.find((t) => t.name === 'h')!.dtype).toBe('BF16')
    expect(tensor(bytes, 'extra')).toEqual([5, 6]) // only theirs changed it
    expect(readFileSync(join(out, 'model', 'adapter_config.json'), 'utf8')).toBe(CONFIG)
  })

  it('refuses flags that are not a model merge (exit 2)', async () => {
    const h = await divergedAdapters()
    for (const args of [
      ['--model-merge', 'average'],
      ['--model-merge', 'ties', '--density', '1.5'],
      ['--model-merge', 'dare', '--weights', '1'],
      ['--model-merge', 'dare', '--weights', '0,0'],
      ['--model-merge', 'dare', '--weights', '1,x'],
      ['--model-merge', 'dare', '--seed', '-1'],
      ['--density', '0.5'],
    ]) {
      const cli = await fp(h.dir, 'merge', 'other', ...args)
      expect(cli.code, args.join(' ')).toBe(2)
    }
    expect(await readRef(h.store, 'HEAD')).toBe(h.ours)
  })

  it('travels through a registry: pushed, cloned, and checked out as it was', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    const model = adapter([1, 2, 3, 4], [5, 6])
    const { id } = await snapshotAgent({ dir, model, message: 'one', allowEmpty: true })
    const remote = `file://${tempDir('registry')}:v1`
    await pushImage({ dir, id, remote })
    const clone = join(tempDir('clone'), 'c')
    await cloneImage({ remote, into: clone })
    const out = join(tempDir('agent'), 'out')
    await checkoutAgent({ dir: clone, id: 'HEAD', into: out })
    expect(readFileSync(join(out, 'model', 'adapter_model.safetensors'))).toEqual(readFileSync(join(model, 'adapter_model.safetensors')))
  })
})

describe('a model layer written by another writer', () => {
  it('merges safetensors files stored whole (pieces not aligned with tensors) by reading their bytes', async () => {
    const { store } = await storeWorkspace({})
    const layerOf = async (w: number[], keep: number[]) => {
      const bytes = writeSafetensors([
        { name: 'keep', dtype: 'F32', shape: [2], values: Float32Array.from(keep) },
        { name: 'w', dtype: 'F32', shape: [2], values: Float32Array.from(w) },
      ])
      const tree = await store.writeObject({
        kind: 'tree',
        schemaVersion: 1,
        entries: [{ name: 'a.safetensors', type: 'file', mode: 0o644, size: bytes.length, blob: await store.writeBlob(bytes) }],
      })
      return store.writeObject({ kind: 'model', schemaVersion: 1, tree })
    }
    const merged = await mergeModelLayers(store, await layerOf([1, 1], [7, 7]), await layerOf([3, 1], [7, 7]), await layerOf([1, 5], [8, 9]), { method: 'linear' })
    expect(merged.outcome).toBe('merged')
    const files = await modelFiles(store, (await readModelLayer(store, (merged as { digest: Digest }).digest)).tree)
    const bytes = await readFileBytes(store, files.get('a.safetensors')!)
    expect(tensor(bytes, 'w')).toEqual([2, 3])
    expect(tensor(bytes, 'keep')).toEqual([8, 9]) // only theirs changed it
  })
})

describe('model layer edge cases', () => {
  it('merges cleanly without --model-merge when the sides changed different files', async () => {
    const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n' })
    const base = adapter([1, 1, 1, 1], [1, 1])
    const base2 = await snapshotAgent({ dir, model: base, message: 'base', allowEmpty: true })
    await updateRef({ store, name: 'refs/heads/other', id: base2.id, message: 'branch' })
    await checkout({ dir, id: 'other' })
    const theirs = await snapshotAgent({ dir, model: adapter([3, 2, 1, 1.5], [1, 3]), message: 'theirs', allowEmpty: true })
    await checkout({ dir, id: 'main' })
    const oursDir = adapter([1, 1, 1, 1], [1, 1])
    writeFileSync(join(oursDir, 'adapter_config.json'), '{"r": 4, "lora_alpha": 16}\n')
    const ours = await snapshotAgent({ dir, model: oursDir, message: 'ours', allowEmpty: true })
    const merged = await mergeImages({ dir, ours: ours.id, theirs: theirs.id })
    expect(merged.outcome).toBe('merged')
    expect(merged.layers.find((l) => l.layer === 'model')!.summary).toBe('model: merged (no file changed on both sides)')
  })

  it('takes a large tensor only one side changed as it is, when the base stored it whole and the sides in pieces', async () => {
    const { store } = await storeWorkspace({})
    const big = (x: number) => Float32Array.from({ length: 1_400_000 }, (_, i) => (i % 7) + x) // 5.6 MB: two pieces in a layer of ours
    const file = (w: number[], large: Float32Array) =>
      writeSafetensors([
        { name: 'large', dtype: 'F32', shape: [large.length], values: large },
        { name: 'w', dtype: 'F32', shape: [2], values: Float32Array.from(w) },
      ])
    const whole = async (bytes: Buffer) => {
      const tree = await store.writeObject({
        kind: 'tree',
        schemaVersion: 1,
        entries: [{ name: 'a.safetensors', type: 'file', mode: 0o644, size: bytes.length, blob: await store.writeBlob(bytes) }],
      })
      return store.writeObject({ kind: 'model', schemaVersion: 1, tree })
    }
    const pieced = async (bytes: Buffer) => {
      const tree = await store.writeObject({ kind: 'tree', schemaVersion: 1, entries: [await storeTensorFile(store, 'a.safetensors', bytes, 'a.safetensors')] })
      return store.writeObject({ kind: 'model', schemaVersion: 1, tree })
    }
    const merged = await mergeModelLayers(store, await whole(file([1, 1], big(0))), await pieced(file([3, 1], big(0))), await pieced(file([1, 1], big(1))), { method: 'linear' })
    const files = await modelFiles(store, (await readModelLayer(store, (merged as { digest: Digest }).digest)).tree)
    const bytes = await readFileBytes(store, files.get('a.safetensors')!)
    expect(tensor(bytes, 'large')).toEqual([...big(1)])
    expect(tensor(bytes, 'w')).toEqual([3, 1])
  })

  it('refuses a symlink to nothing and a directory leading back up (exit 2)', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    const dangling = adapter([1, 2, 3, 4], [1, 2])
    symlinkSync(join(dangling, 'gone'), join(dangling, 'link.json'))
    const loop = adapter([1, 2, 3, 4], [1, 2])
    symlinkSync('..', join(loop, 'nested', 'up'))
    for (const model of [dangling, loop]) expect((await fp(dir, 'snapshot', '--model', model, '--allow-empty')).code).toBe(2)
  })
})
