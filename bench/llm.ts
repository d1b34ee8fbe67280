/**
 * `npm run bench -- llm [--quick]`: the KV-cache layer's benchmark, on a ~56 MB llama model the
 * benchmark generates (test/helpers/tinyLlama.ts), llama.cpp on the CPU with one thread:
 * restoring a KV-cache state and generating 10 tokens against prefilling the 1,000-token
 * prompt again; forking 8 children from one state against a cold prefill per child; the
 * bytes a grown conversation's second state adds; and a three-way merge of two ~50 MB
 * LoRA adapters (200 F32 tensors, rank 16 on 4096-wide layers) by each method, through
 * the store as `forkpoint merge --model-merge` does it, against a plain average of the
 * same tensors already in memory. Each pair in the same run, interleaved.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Digest, Store, decodeFloats, parseSafetensors, writeSafetensors } from '../src/index.js'
import { mergeModelLayers } from '../src/image/model/mergeModels.js'
import { MODEL_MERGE_METHODS } from '../src/image/model/mergeTensors.js'
import { modelFiles, readFileBytes, readModelLayer, storeModelDir } from '../src/image/model/modelLayer.js'
import { type LlamaContextSequence, type Token, getLlama } from 'node-llama-cpp'
import { forkSequence } from '../src/image/cache/forkSequence.js'
import { prefill, restoreSequence, snapshotSequence } from '../src/image/cache/sequenceState.js'
import { BENCH_SHAPE, TEST_SHAPE, tinyLlama } from '../test/helpers/tinyLlama.js'
import { mulberry32 } from '../src/util/mulberry32.js'
import { compare, measure, report, type Row } from './harness.js'

const RANK = 16
const WIDTH = 4096

/** An adapter directory of `pairs` lora_A / lora_B pairs, values from a seeded stream (`drift` moves them away from the base). */
function adapter(root: string, name: string, pairs: number, seed: number, drift: number): string {
  const dir = join(root, name)
  const [own, shared] = [mulberry32(seed), mulberry32(42)] // every adapter draws the same base values, then its own drift
  const random = () => (own() - 0.5) * 0.02
  const baseRandom = () => (shared() - 0.5) * 0.02
  const tensors = []
  for (let i = 0; i < pairs; i++) {
    for (const [part, shape] of [
      ['lora_A', [RANK, WIDTH]],
      ['lora_B', [WIDTH, RANK]],
    ] as const) {
      const values = Float32Array.from({ length: RANK * WIDTH }, () => baseRandom() + drift * random())
      tensors.push({ name: `base_model.model.layers.${i}.self_attn.q_proj.${part}.weight`, dtype: 'F32' as const, shape: [...shape], values })
    }
  }
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'adapter_model.safetensors'), writeSafetensors(tensors, { format: 'pt' }))
  return dir
}

export async function main(args: string[]): Promise<void> {
  const quick = args.includes('--quick')
  const pairs = quick ? 10 : 100
  const root = mkdtempSync(join(tmpdir(), 'fp-bench-llm-'))
  try {
    const store = await Store.init(join(root, 'store'))
    const [base, ours, theirs] = (await Promise.all(
      [adapter(root, 'base', pairs, 1, 0), adapter(root, 'ours', pairs, 2, 1), adapter(root, 'theirs', pairs, 3, 1)].map((dir) => storeModelDir(store, dir)),
    )) as [Digest, Digest, Digest]
    const files = await Promise.all([base, ours, theirs].map(async (d) => modelFiles(store, (await readModelLayer(store, d)).tree)))
    const bytes = await Promise.all(files.map((f) => readFileBytes(store, f.get('adapter_model.safetensors')!)))
    const size = bytes[1]!.length
    const decoded = bytes.map((b) => parseSafetensors(b, 'adapter').tensors.map((t) => decodeFloats(b.subarray(t.begin, t.end), 'F32')))
    const average = await measure(
      () => {
        for (let t = 0; t < decoded[1]!.length; t++) {
          const [o, th] = [decoded[1]![t]!, decoded[2]![t]!]
          const out = new Float32Array(o.length)
          for (let i = 0; i < o.length; i++) out[i] = (o[i]! + th[i]!) / 2
        }
      },
      { runs: quick ? 3 : 5 },
    )
    const rows: Row[] = await cacheRows(store, root, quick)
    for (const method of MODEL_MERGE_METHODS) {
      const merged = await measure(() => mergeModelLayers(store, base, ours, theirs, { method, density: 0.5, dropRate: 0.5, seed: 1 }), { runs: quick ? 3 : 5 })
      rows.push({
        operation: `merge of two adapters, ${method}`,
        adapter_MB: Number((size / 1e6).toFixed(1)),
        forkpoint_ms: Math.round(merged.median),
        baseline: 'plain average of the same tensors in memory',
        baseline_ms: Math.round(average.median),
        ratio: merged.median / average.median,
        target: method === 'ties' || method.startsWith('dare') ? '≤ 1000 ms' : '–',
      })
    }
    report('llm', 'KV-cache and model layers: llama.cpp on the CPU (1 thread), and three-way merges of two LoRA adapters through the store (medians)', rows)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

const GENERATED = 10

/** Restore vs prefill, fork vs cold prefills, and a grown conversation's state, on the generated model. */
async function cacheRows(store: Store, root: string, quick: boolean): Promise<Row[]> {
  const modelPath = join(root, 'bench-model.gguf')
  const gguf = tinyLlama(1, quick ? TEST_SHAPE : BENCH_SHAPE)
  writeFileSync(modelPath, gguf)
  const modelMB = Number((gguf.length / 1e6).toFixed(1))
  const llama = await getLlama({ gpu: false, build: 'never' })
  const model = await llama.loadModel({ modelPath })
  try {
    const prompt = model.tokenize('The agent opened the repository, read the failing test, traced the bug to the parser, and wrote a fix. '.repeat(12)).slice(0, 1000)
    const fresh = () => model.createContext({ sequences: 1, contextSize: 2048, threads: 1 })
    const first = await fresh()
    const sequence = first.getSequence()
    const pending = await prefill(sequence, prompt)
    const saved = await snapshotSequence({ store, sequence, modelPath, pending })
    // the conversation grows by 10%, and is snapshotted again
    await sequence.evaluateWithoutGeneratingNewTokens([...pending, ...prompt.slice(0, 99)])
    const grown = await snapshotSequence({ store, sequence, modelPath, pending: prompt.slice(99, 100) })
    await first.dispose()

    // each run in a fresh context, made before the clock starts
    let context: Awaited<ReturnType<typeof fresh>> | null = null
    let live: LlamaContextSequence | null = null
    const renew = async () => {
      await context?.dispose()
      context = await fresh()
      live = context.getSequence()
    }
    const restored = await compare(
      { before: renew, run: async () => generate((await restoreSequence({ store, id: saved.id, sequence: live!, modelPath })).pending as Token[], live!) },
      { before: renew, run: () => generate(prompt, live!) },
      { runs: quick ? 3 : 5 },
    )
    // the same without the 10 generated tokens both sides share: the restore itself against the prefill it replaces
    const restoredAlone = await compare(
      { before: renew, run: () => restoreSequence({ store, id: saved.id, sequence: live!, modelPath }) },
      { before: renew, run: () => prefill(live!, prompt) },
      { runs: quick ? 3 : 5 },
    )
    await (context as Awaited<ReturnType<typeof fresh>> | null)?.dispose()
    const k = 8
    let evaluated = 0
    const forked = await compare(
      {
        run: async () => {
          const result = await forkSequence({ store, id: saved.id, model, modelPath, k, maxTokens: GENERATED, vary: { temperature: [0.7], seed: [1, 2, 3, 4, 5, 6, 7, 8] } })
          evaluated = result.children.reduce((n, c) => n + c.evaluated, 0)
        },
      },
      {
        run: async () => {
          for (let i = 0; i < k; i++) {
            const cold = await fresh()
            await generate(prompt, cold.getSequence())
            await cold.dispose()
          }
        },
      },
      { runs: quick ? 2 : 3 },
    )
    const row = (operation: string, ms: number | string, baseline: string, baselineMs: number | string, ratio: number | string, target: string, extra = '–'): Row => ({
      operation: `${operation} (model ${modelMB} MB)`,
      adapter_MB: '–',
      forkpoint_ms: typeof ms === 'number' ? Math.round(ms) : ms,
      baseline,
      baseline_ms: typeof baselineMs === 'number' ? Math.round(baselineMs) : baselineMs,
      ratio,
      target,
      note: extra,
    })
    return [
      row(`restore a 1,000-token state + ${GENERATED} tokens`, restored.a, `prefill the 1,000-token prompt + ${GENERATED} tokens`, restored.b, restored.ratio, '≤ 0.1x'),
      row(
        'restore a 1,000-token state alone (read, check, load)',
        restoredAlone.a,
        'prefill the 1,000-token prompt alone',
        restoredAlone.b,
        restoredAlone.ratio,
        'proposed: ≤ 0.1x',
        `the ${GENERATED} generated tokens both sides above share take ${Math.round(restored.a - restoredAlone.a)} ms of the restore's ${Math.round(restored.a)}`,
      ),
      row(
        `fork k = ${k} from one state, ${GENERATED} tokens each (per child)`,
        forked.a / k,
        'cold prefill + the same, per child',
        forked.b / k,
        forked.ratio,
        'prompt tokens evaluated after the fork: 0',
        `${evaluated} tokens evaluated in all: each child's pending one, none of the prompt`,
      ),
      row(
        'second state of a conversation grown by 10%',
        '–',
        'its state file (bytes)',
        grown.stateBytes,
        '–',
        'report',
        `${grown.newBytes} new bytes stored of ${grown.stateBytes} (${((100 * grown.newBytes) / grown.stateBytes).toFixed(0)}%); the first state ${saved.stateBytes} bytes`,
      ),
    ]
  } finally {
    await model.dispose()
    await llama.dispose()
  }
}

async function generate(input: Token[], sequence: LlamaContextSequence): Promise<Token[]> {
  const out: Token[] = []
  for await (const token of sequence.evaluate(input, { temperature: 0 })) {
    out.push(token)
    if (out.length >= GENERATED) break
  }
  return out
}
