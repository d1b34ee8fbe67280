/**
 * `npm run bench -- llm [--quick]`: issue 14's benchmark. So far its model-layer row: a
 * three-way merge of two ~50 MB LoRA adapters (200 F32 tensors, rank 16 on 4096-wide
 * layers) by each method, through the store as `forkpoint merge --model-merge` does it
 * (read, check, combine, write the merged file back tensor by tensor), against a plain
 * average of the same tensors already in memory, in the same run.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Digest, Store, decodeFloats, parseSafetensors, writeSafetensors } from '../src/index.js'
import { mergeModelLayers } from '../src/image/model/mergeModels.js'
import { MODEL_MERGE_METHODS } from '../src/image/model/mergeTensors.js'
import { modelFiles, readFileBytes, readModelLayer, storeModelDir } from '../src/image/model/modelLayer.js'
import { measure, report, type Row } from './harness.js'

const RANK = 16
const WIDTH = 4096

/** An adapter directory of `pairs` lora_A / lora_B pairs, values from a seeded stream (`drift` moves them away from the base). */
function adapter(root: string, name: string, pairs: number, seed: number, drift: number): string {
  const dir = join(root, name)
  let state = seed
  const random = () => ((state = (Math.imul(state, 48271) >>> 0) % 2147483647) / 2147483647 - 0.5) * 0.02
  let base = 42
  const baseRandom = () => ((base = (Math.imul(base, 48271) >>> 0) % 2147483647) / 2147483647 - 0.5) * 0.02
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
    const rows: Row[] = []
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
    report('llm', 'Model layer: three-way merge of two LoRA adapters through the store (median of 5)', rows)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
