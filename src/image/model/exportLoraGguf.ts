import { existsSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { InputNotFoundError, UsageError } from '../../errors/index.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import { resolveId } from '../../store/resolveId.js'
import { atomicWrite } from '../../util/atomicWrite.js'
import { previewValue } from '../../util/previewValue.js'
import { readSnapshot } from '../../world/tree/readObjects.js'
import { type GgufTensor, writeGguf } from './gguf.js'
import { isSafetensors, modelFiles, readFileBytes, readModelLayer } from './modelLayer.js'
import { type LoraMatrix, checkLoraPairs } from './checkLoraPairs.js'
import { FLOAT_DTYPES, type FloatDtype, type TensorInfo, decodeFloats, parseSafetensors } from './safetensors.js'

export interface ExportLoraArgs extends StoreLocator {
  /** The image whose model layer holds a PEFT LoRA adapter (a merge's result, say). */
  id: string
  /** The GGUF file to write. */
  out: string
  /** The safetensors file of the layer (default: the only one, or `adapter_model.safetensors`). */
  file?: string
  /** LoRA alpha (default: `lora_alpha` of `adapter_config.json` beside it). */
  alpha?: number
  /** The base model's llama.cpp architecture (default `llama`). */
  architecture?: string
}

/** Hugging Face module names and llama.cpp's for them. */
const MODULES: Record<string, string> = {
  q_proj: 'attn_q',
  k_proj: 'attn_k',
  v_proj: 'attn_v',
  o_proj: 'attn_output',
  gate_proj: 'ffn_gate',
  up_proj: 'ffn_up',
  down_proj: 'ffn_down',
}
const PEFT_NAME = /(?:^|\.)layers\.(\d+)\.(?:self_attn|mlp)\.(\w+)\.lora_([AB])(?:\.default)?\.weight$/

/**
 * Write an image's LoRA adapter (PEFT names and shapes in safetensors) as a GGUF adapter
 * llama.cpp loads: `general.type=adapter`, `adapter.type=lora`, `adapter.lora.alpha`, and
 * each pair as `blk.N.<module>.weight.lora_a` / `.lora_b`, F32, dimensions innermost first.
 * @throws {UsageError} when the image has no model layer, no such file, a tensor that is not a LoRA matrix of a known module, or no alpha
 * @throws {MalformedTensorFileError} an inconsistent adapter: an A without its B, ranks that differ, an empty matrix (nothing is written)
 */
export async function exportLoraGguf(args: ExportLoraArgs): Promise<{ out: string; tensors: number; alpha: number }> {
  const { store } = await openStore(args)
  const id = await resolveId(store, args.id)
  const snapshot = await readSnapshot(store, id)
  if (!snapshot.model) throw new UsageError(`image ${id} has no model layer to export`, { id })
  const files = await modelFiles(store, (await readModelLayer(store, snapshot.model)).tree)
  const tensorFiles = [...files.keys()].filter(isSafetensors)
  const name = args.file ?? (tensorFiles.length === 1 ? tensorFiles[0]! : 'adapter_model.safetensors')
  const entry = files.get(name)
  if (!entry || !isSafetensors(name))
    throw new UsageError(`the model layer has no safetensors file ${JSON.stringify(name)} (it has ${tensorFiles.join(', ') || 'none'})`, { file: name })
  const bytes = await readFileBytes(store, entry)
  const parsed = parseSafetensors(bytes, name).tensors
  const matrices = parsed.map((t) => loraMatrix(t, name))
  checkLoraPairs(matrices, name)
  const tensors: GgufTensor[] = parsed.map((t, i) => {
    const { target, side, rows, cols } = matrices[i]!
    return { name: `${target}.lora_${side.toLowerCase()}`, dims: [cols, rows], values: decodeFloats(bytes.subarray(t.begin, t.end), t.dtype as FloatDtype) }
  })
  const alpha = args.alpha ?? (await configAlpha(store, files, name))
  if (alpha === undefined || !Number.isFinite(alpha)) throw new UsageError(`no LoRA alpha: pass --alpha, or keep adapter_config.json (lora_alpha) beside ${name}`)
  const out = resolve(args.out)
  if (!existsSync(dirname(out))) throw new InputNotFoundError(`llm export-lora: the directory of ${out} does not exist`, { path: dirname(out) })
  const metadata: Parameters<typeof writeGguf>[0] = [
    ['general.architecture', { type: 'string', value: args.architecture ?? 'llama' }],
    ['general.type', { type: 'string', value: 'adapter' }],
    ['adapter.type', { type: 'string', value: 'lora' }],
    ['adapter.lora.alpha', { type: 'f32', value: alpha }],
  ]
  await atomicWrite(out, writeGguf(metadata, tensors))
  return { out, tensors: tensors.length, alpha }
}

/** A tensor as a LoRA matrix of a module llama.cpp knows; a UsageError (exit 2) for any other tensor: the wrong file was named. */
function loraMatrix(t: TensorInfo, file: string): LoraMatrix {
  const m = PEFT_NAME.exec(t.name)
  const module = m && MODULES[m[2]!]
  if (!m || !module || t.shape.length !== 2 || !(FLOAT_DTYPES as readonly string[]).includes(t.dtype))
    throw new UsageError(`${file}: tensor ${previewValue(t.name)} is not a LoRA A or B matrix of a module llama.cpp knows (${Object.keys(MODULES).join(', ')})`, {
      tensor: t.name,
    })
  const [rows, cols] = t.shape as [number, number]
  return { tensor: t.name, target: `blk.${m[1]}.${module}.weight`, side: m[3] as 'A' | 'B', rows, cols }
}

async function configAlpha(store: Parameters<typeof readFileBytes>[0], files: Awaited<ReturnType<typeof modelFiles>>, tensorFile: string): Promise<number | undefined> {
  const dir = tensorFile.includes('/') ? tensorFile.slice(0, tensorFile.lastIndexOf('/') + 1) : ''
  const config = files.get(`${dir}adapter_config.json`)
  if (!config) return undefined
  try {
    const alpha = (JSON.parse((await readFileBytes(store, config)).toString('utf8')) as { lora_alpha?: unknown }).lora_alpha
    return typeof alpha === 'number' ? alpha : undefined
  } catch {
    throw new UsageError(`${dir}adapter_config.json is not JSON`)
  }
}
