import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Llama, type LlamaModel, type Token, getLlama } from 'node-llama-cpp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Digest, DigestMismatchError, Store, UsageError, cloneImage, pushImage, snapshotAgent, writeSafetensors } from '../../../src/index.js'
import { forkSequence } from '../../../src/image/cache/forkSequence.js'
import { readKvCacheLayer, stateChunking } from '../../../src/image/cache/kvCacheLayer.js'
import { prefill, restoreSequence, snapshotSequence } from '../../../src/image/cache/sequenceState.js'
import { readChunks, readSnapshot } from '../../../src/world/tree/readObjects.js'
import { readRef } from '../../../src/store/refs.js'
import { fp, fpJson } from '../../helpers/cli.js'
import { tinyLlama } from '../../helpers/tinyLlama.js'
import { tempDir } from '../../helpers/tmp.js'
import { storeWorkspace } from '../../helpers/workspace.js'

const PROMPT = 'The agent read the file, ran the tests, and then decided to '.repeat(4)
let llama: Llama
let model: LlamaModel
let modelPath: string
let otherPath: string

beforeAll(async () => {
  const dir = tempDir('models')
  modelPath = join(dir, 'tiny.gguf')
  otherPath = join(dir, 'other.gguf')
  writeFileSync(modelPath, tinyLlama(1))
  writeFileSync(otherPath, tinyLlama(2))
  llama = await getLlama({ gpu: false, build: 'never' })
  model = await llama.loadModel({ modelPath })
})
afterAll(async () => {
  await model?.dispose()
  await llama?.dispose()
})

const fresh = async (m = model) => {
  const context = await m.createContext({ sequences: 1, contextSize: 1024, threads: 1 })
  return { context, sequence: context.getSequence() }
}

async function generate(
  sequence: Awaited<ReturnType<typeof fresh>>['sequence'],
  input: Token[],
  n: number,
  options: { temperature?: number; seed?: number } = {},
): Promise<Token[]> {
  const out: Token[] = []
  for await (const token of sequence.evaluate(input, { temperature: 0, ...options })) {
    out.push(token)
    if (out.length >= n) break
  }
  return out
}

/** A sequence that has read the prompt, snapshotted, and the store it is in. */
async function snapshotted() {
  const { dir, store } = await storeWorkspace({ 'a.txt': 'a\n' })
  const { context, sequence } = await fresh()
  const pending = await prefill(sequence, model.tokenize(PROMPT))
  const saved = await snapshotSequence({ store, sequence, modelPath, pending })
  return { dir, store, context, sequence, pending, saved }
}

describe('the KV-cache layer, with llama.cpp on the CPU', () => {
  it('restores a state whose greedy continuation is token for token the original and a cold prefill', async () => {
    const s = await snapshotted()
    const original = await generate(s.sequence, s.pending, 10)
    await s.context.dispose()

    const restored = await fresh()
    const back = await restoreSequence({ store: s.store, id: s.saved.id, sequence: restored.sequence, modelPath })
    expect(back.tokens).toHaveLength(model.tokenize(PROMPT).length - 1)
    expect(await generate(restored.sequence, back.pending as Token[], 10)).toEqual(original)
    await restored.context.dispose()

    const cold = await fresh()
    expect(await generate(cold.sequence, model.tokenize(PROMPT), 10)).toEqual(original)
    await cold.context.dispose()
  })

  it('forks K children: at temperature 0 all the same, with different seeds not, none evaluating the prompt again; a scorer keeps the best state', async () => {
    const s = await snapshotted()
    const original = await generate(s.sequence, s.pending, 8)
    await s.context.dispose()
    const greedy = await forkSequence({ store: s.store, id: s.saved.id, model, modelPath, k: 3, maxTokens: 8 })
    expect(greedy.children.map((c) => c.tokens)).toEqual([original, original, original])
    expect(greedy.children.map((c) => c.evaluated)).toEqual([1, 1, 1])

    const sampled = await forkSequence({ store: s.store, id: s.saved.id, model, modelPath, k: 4, maxTokens: 8, vary: { temperature: [1.5], seed: [1, 2, 3, 4] } })
    expect(new Set(sampled.children.map((c) => c.tokens.join())).size).toBeGreaterThan(1)
    expect(sampled.children.map((c) => [c.temperature, c.seed])).toEqual([
      [1.5, 1],
      [1.5, 2],
      [1.5, 3],
      [1.5, 4],
    ])

    const scored = await forkSequence({
      store: s.store,
      id: s.saved.id,
      model,
      modelPath,
      k: 3,
      maxTokens: 6,
      vary: { temperature: [1.5], seed: [5, 6, 7] },
      scorer: (c) => (c.seed! === 6 ? 1 : 0),
    })
    expect(scored.best!.index).toBe(1)
    const best = await readKvCacheLayer(s.store, scored.best!.id)
    expect(best.tokens).toEqual([...model.tokenize(PROMPT), ...scored.children[1]!.tokens.slice(0, -1)])
    expect(best.pending).toEqual(scored.children[1]!.tokens.slice(-1))
  })

  it('refuses a changed piece of state (exit 5) and another model (exit 2) before llama.cpp reads anything', async () => {
    const s = await snapshotted()
    await s.context.dispose()
    const { context, sequence } = await fresh()
    let loads = 0
    const watched = new Proxy(sequence, {
      get: (target, prop) =>
        prop === 'loadStateFromFile' ? async (...a: Parameters<typeof sequence.loadStateFromFile>) => (loads++, target.loadStateFromFile(...a)) : Reflect.get(target, prop, target),
    })
    const other = await restoreSequence({ store: s.store, id: s.saved.id, sequence: watched, modelPath: otherPath }).catch((e: unknown) => e)
    expect(other).toBeInstanceOf(UsageError)
    expect((other as UsageError).exitCode).toBe(2)

    const layer = await readKvCacheLayer(s.store, s.saved.id)
    const piece = (await readChunks(s.store, layer.state)).chunks[3]!.blob
    const path = s.store.objectPath(piece)
    const bytes = readFileSync(path)
    bytes[10] = bytes[10]! ^ 0xff
    const { chmodSync } = await import('node:fs')
    chmodSync(path, 0o644)
    writeFileSync(path, bytes)
    const corrupt = await restoreSequence({ store: s.store, id: s.saved.id, sequence: watched, modelPath }).catch((e: unknown) => e)
    expect(corrupt).toBeInstanceOf(DigestMismatchError)
    expect((corrupt as DigestMismatchError).exitCode).toBe(5)
    expect(loads).toBe(0)
    await context.dispose()
  })

  it('stores a grown conversation sharing most bytes with its earlier state', async () => {
    const s = await snapshotted()
    const more = model.tokenize(' and wrote it.') // about 10% more tokens
    await s.sequence.evaluateWithoutGeneratingNewTokens([...s.pending, ...more.slice(0, -1)])
    const second = await snapshotSequence({ store: s.store, sequence: s.sequence, modelPath, pending: more.slice(-1) })
    expect(second.tokens).toBeGreaterThan(s.saved.tokens)
    expect(second.newBytes).toBeLessThan(second.stateBytes / 2)
    await s.context.dispose()
  })

  it('cuts the states of one model alike at every length: pieces of two tokens of cells, 8 KiB to 1 MiB', () => {
    const perToken = 8208 // the benchmark model's: 4 layers of 512 K and V halves at 2 bytes, and a token's own 16
    expect(stateChunking(900 * perToken + 24, 900).avgSize).toBe(16384)
    expect(stateChunking(990 * perToken + 24, 990).avgSize).toBe(16384)
    expect(stateChunking(1 * perToken + 24, 1).avgSize).toBe(16384)
    expect(stateChunking(900 * 527, 900)).toEqual({ minSize: 2048, avgSize: 8192, maxSize: 65536 })
    expect(stateChunking(10 * (4 << 20), 10).avgSize).toBe(1 << 20)
  })

  it('travels in an image: pushed, cloned, and restored from the clone to the same continuation', async () => {
    const s = await snapshotted()
    const original = await generate(s.sequence, s.pending, 6)
    await s.context.dispose()
    const { id } = await snapshotAgent({ dir: s.dir, layers: { cache: s.saved.id }, message: 'with cache', allowEmpty: true })
    const remote = `file://${tempDir('registry')}:v1`
    await pushImage({ dir: s.dir, id, remote })
    const clone = join(tempDir('clone'), 'c')
    await cloneImage({ remote, into: clone })
    const store = await Store.open(join(clone, '.forkpoint'))
    const cache = (await readSnapshot(store, (await readRef(store, 'HEAD'))!)).cache!
    const restored = await fresh()
    const back = await restoreSequence({ store, id: cache, sequence: restored.sequence, modelPath })
    expect(await generate(restored.sequence, back.pending as Token[], 6)).toEqual(original)
    await restored.context.dispose()
  })
})

describe('forkpoint llm fork', () => {
  it('prints K continuations and, with --score, a new image whose cache continues the best; refuses what it cannot fork (exit 2)', async () => {
    const s = await snapshotted()
    await s.context.dispose()
    const { id } = await snapshotAgent({ dir: s.dir, layers: { cache: s.saved.id }, message: 'with cache', allowEmpty: true })
    const score = 'if [ "$FORKPOINT_CHILD" = 2 ]; then echo 5; else echo 1; fi'
    const cli = await fpJson<{
      children: Array<{ index: number; tokens: number[]; evaluated: number; score: number }>
      image: string
      ref: string
      best: { index: number; id: string }
    }>(s.dir, 'llm', 'fork', id, '--model-file', modelPath, '-k', '3', '--vary', 'temperature=0.8', '--vary', 'seed=1,2,3', '--max-tokens', '5', '--score', score)
    expect(cli.code).toBe(0)
    expect(cli.json.children.map((c) => [c.index, c.tokens.length, c.evaluated, c.score])).toEqual([
      [0, 5, 1, 1],
      [1, 5, 1, 1],
      [2, 5, 1, 5],
    ])
    expect(cli.json.best.index).toBe(2)
    const image = await readSnapshot(s.store, cli.json.image as Digest)
    expect(image.parents).toEqual([id])
    expect(image.cache).toBe(cli.json.best.id)
    expect((await readKvCacheLayer(s.store, image.cache!)).pending).toEqual(cli.json.children[2]!.tokens.slice(-1))
    // the best image is kept by a ref of the image's forks: gc keeps it, log --all shows it
    expect(cli.json.ref).toBe(`refs/forks/${id.slice(7, 19)}/0`)
    expect(await readRef(s.store, cli.json.ref)).toBe(cli.json.image)
    const gc = await fpJson<{ removedIds: string[] }>(s.dir, 'gc', '--dry-run')
    expect(gc.json.removedIds).not.toContain(cli.json.image)
    expect(gc.json.removedIds).not.toContain(cli.json.best.id)
    const all = await fpJson<{ entries: Array<{ id: string; refs: string[] }> }>(s.dir, 'log', '--all')
    expect(all.json.entries.find((e) => e.id === cli.json.image)?.refs).toEqual([cli.json.ref])

    const human = await fp(s.dir, 'llm', 'fork', id, '--model-file', modelPath, '-k', '2', '--max-tokens', '3')
    expect(human.code).toBe(0)
    expect(human.stdout.split('\n').filter((l) => /^\d\ttemperature 0\t/.test(l))).toHaveLength(2)

    const { cache: _cache, ...withoutCache } = await readSnapshot(s.store, id)
    const plain = await s.store.writeObject(withoutCache)
    const notAModel = join(tempDir('notgguf'), 'x.gguf')
    writeFileSync(notAModel, 'not a model')
    for (const args of [
      [plain, '--model-file', modelPath],
      [id, '--model-file', join(tempDir('none'), 'missing.gguf')],
      [id, '--model-file', modelPath, '-k', '0'],
      [id, '--model-file', modelPath, '--vary', 'top_p=0.5'],
      [id, '--model-file', modelPath, '--vary', 'temperature='],
      [id, '--model-file', modelPath, '--vary', 'seed=1.5'],
      [id, '--model-file', modelPath, '--vary', 'seed=1,2=3'],
      [id, '--model-file', notAModel],
    ]) {
      const refused = await fp(s.dir, 'llm', 'fork', ...args)
      expect(refused.code, args.join(' ')).toBe(2)
    }
  })
})

describe('forkpoint llm export-lora', () => {
  /** A PEFT-style LoRA for the tiny model's q and v projections of both layers (rank 4), seeded. */
  function lora(dir: string): void {
    let state = 7
    const random = () => ((state = (Math.imul(state, 48271) >>> 0) % 2147483647) / 2147483647 - 0.5) * 2
    const tensors = []
    for (const layer of [0, 1])
      for (const module of ['q_proj', 'v_proj']) {
        const prefix = `base_model.model.model.layers.${layer}.self_attn.${module}`
        tensors.push({ name: `${prefix}.lora_A.weight`, dtype: 'F32' as const, shape: [4, 64], values: Float32Array.from({ length: 256 }, random) })
        tensors.push({ name: `${prefix}.lora_B.weight`, dtype: 'F16' as const, shape: [64, 4], values: Float32Array.from({ length: 256 }, random) })
      }
    writeFileSync(join(dir, 'adapter_model.safetensors'), writeSafetensors(tensors))
    writeFileSync(join(dir, 'adapter_config.json'), JSON.stringify({ r: 4, lora_alpha: 8 }))
  }

  it('writes a GGUF adapter llama.cpp loads: at scale 0 the output is the base model, at scale 1 it changes', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    const adapter = tempDir('lora')
    lora(adapter)
    const { id } = await snapshotAgent({ dir, model: adapter, message: 'lora', allowEmpty: true })
    const out = join(tempDir('gguf'), 'adapter.gguf')
    const cli = await fp(dir, 'llm', 'export-lora', id, '-o', out)
    expect(cli.code).toBe(0)
    expect(cli.stdout).toContain('8 tensors, alpha 8')

    const continuation = async (scale: number | null) => {
      const context = await model.createContext({ sequences: 1, contextSize: 512, threads: 1, ...(scale === null ? {} : { lora: { adapters: [{ filePath: out, scale }] } }) })
      const tokens = await generate(context.getSequence(), model.tokenize(PROMPT), 12)
      await context.dispose()
      return tokens
    }
    const base = await continuation(null)
    expect(await continuation(0)).toEqual(base)
    expect(await continuation(1)).not.toEqual(base)
  })

  it('refuses an adapter with a tensor llama.cpp has no name for (exit 2)', async () => {
    const { dir } = await storeWorkspace({ 'a.txt': 'a\n' })
    const adapter = tempDir('lora')
    writeFileSync(
      join(adapter, 'adapter_model.safetensors'),
      writeSafetensors([{ name: 'base_model.model.lm_head.lora_A.weight', dtype: 'F32', shape: [1, 2], values: Float32Array.of(1, 2) }]),
    )
    const { id } = await snapshotAgent({ dir, model: adapter, message: 'odd', allowEmpty: true })
    const cli = await fp(dir, 'llm', 'export-lora', id, '-o', join(tempDir('gguf'), 'x.gguf'), '--alpha', '4')
    expect(cli.code).toBe(2)
    expect(cli.stderr).toContain('lm_head')
    expect((await fp(dir, 'llm', 'export-lora', id, '-o', join(tempDir('gguf'), 'missing', 'x.gguf'), '--alpha', '4')).code).toBe(2)
    expect((await fp(dir, 'llm', 'export-lora', id, '-o', join(tempDir('gguf'), 'x.gguf'), '--alpha', '')).code).toBe(2)
  })
})
