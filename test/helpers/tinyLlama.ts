import { type GgufTensor, type GgufValue, writeGguf } from '../../src/image/model/gguf.js'
import { mulberry32 } from '../../src/util/mulberry32.js'

/**
 * A tiny llama-architecture GGUF model, deterministic from a seed: random F32 weights, a
 * byte-level SentencePiece-style vocabulary (`<unk>`, `<s>`, `</s>`, the 256 `<0xXX>` byte
 * tokens, printable ASCII with `▁` for the space). No model can be downloaded here; this is
 * what the LLM tests and the benchmark run on. Not shipped.
 */
export interface TinyLlamaShape {
  embedding: number
  layers: number
  heads: number
  kvHeads: number
  feedForward: number
  context: number
}

/** About 0.5 MB: for tests. */
export const TEST_SHAPE: TinyLlamaShape = { embedding: 64, layers: 2, heads: 4, kvHeads: 4, feedForward: 128, context: 2048 }
/** About 56 MB: for the benchmark. */
export const BENCH_SHAPE: TinyLlamaShape = { embedding: 512, layers: 4, heads: 8, kvHeads: 8, feedForward: 1536, context: 4096 }

export function tinyLlamaVocabulary(): { tokens: string[]; types: number[]; scores: number[] } {
  const tokens = ['<unk>', '<s>', '</s>']
  const types = [2, 3, 3]
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`)
    types.push(6)
  }
  for (let c = 32; c < 127; c++) {
    tokens.push(c === 32 ? '\u2581' : String.fromCharCode(c))
    types.push(1)
  }
  return { tokens, types, scores: tokens.map((_, i) => (types[i] === 1 ? -i : 0)) }
}

export function tinyLlama(seed: number, shape: TinyLlamaShape = TEST_SHAPE): Buffer {
  const random = mulberry32(seed)
  const normal = () => (random() + random() + random() - 1.5) * 0.4 // roughly N(0, 0.2)
  const { tokens, types, scores } = tinyLlamaVocabulary()
  const vocab = tokens.length
  const { embedding: e, feedForward: ff } = shape
  const headDim = e / shape.heads
  const kv = headDim * shape.kvHeads
  const weights = (name: string, dims: number[]): GgufTensor => ({ name, dims, values: Float32Array.from({ length: dims.reduce((n, d) => n * d, 1) }, normal) })
  const ones = (name: string, n: number): GgufTensor => ({ name, dims: [n], values: new Float32Array(n).fill(1) })
  const tensors: GgufTensor[] = [weights('token_embd.weight', [e, vocab])]
  for (let i = 0; i < shape.layers; i++) {
    tensors.push(
      ones(`blk.${i}.attn_norm.weight`, e),
      weights(`blk.${i}.attn_q.weight`, [e, e]),
      weights(`blk.${i}.attn_k.weight`, [e, kv]),
      weights(`blk.${i}.attn_v.weight`, [e, kv]),
      weights(`blk.${i}.attn_output.weight`, [e, e]),
      ones(`blk.${i}.ffn_norm.weight`, e),
      weights(`blk.${i}.ffn_gate.weight`, [e, ff]),
      weights(`blk.${i}.ffn_up.weight`, [e, ff]),
      weights(`blk.${i}.ffn_down.weight`, [ff, e]),
    )
  }
  tensors.push(ones('output_norm.weight', e), weights('output.weight', [e, vocab]))
  const u32 = (value: number): GgufValue => ({ type: 'u32', value })
  const metadata: Array<[string, GgufValue]> = [
    ['general.architecture', { type: 'string', value: 'llama' }],
    ['general.name', { type: 'string', value: `tiny-llama-${seed}` }],
    ['llama.context_length', u32(shape.context)],
    ['llama.embedding_length', u32(e)],
    ['llama.block_count', u32(shape.layers)],
    ['llama.feed_forward_length', u32(ff)],
    ['llama.attention.head_count', u32(shape.heads)],
    ['llama.attention.head_count_kv', u32(shape.kvHeads)],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'f32', value: 1e-5 }],
    ['llama.rope.dimension_count', u32(headDim)],
    ['tokenizer.ggml.model', { type: 'string', value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: 'strings', value: tokens }],
    ['tokenizer.ggml.scores', { type: 'f32s', value: scores }],
    ['tokenizer.ggml.token_type', { type: 'i32s', value: types }],
    ['tokenizer.ggml.unknown_token_id', u32(0)],
    ['tokenizer.ggml.bos_token_id', u32(1)],
    ['tokenizer.ggml.eos_token_id', u32(2)],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: true }],
  ]
  return writeGguf(metadata, tensors)
}
