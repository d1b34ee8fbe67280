import { MalformedTensorFileError } from '../../errors/index.js'
import { previewValue } from '../../util/previewValue.js'

/** One matrix of a LoRA pair: its tensor in the adapter file, the weight it adapts (`blk.N.attn_q.weight`), and its PEFT shape. */
export interface LoraMatrix {
  tensor: string
  target: string
  side: 'A' | 'B'
  rows: number
  cols: number
}

/**
 * Refuse an adapter llama.cpp could not apply, before anything is written
 * (MalformedTensorFileError, exit 5): every adapted weight has exactly one A and one B,
 * no dimension is empty, and A's rows (PEFT's rank × in) equal B's columns (out × rank).
 */
export function checkLoraPairs(matrices: LoraMatrix[], file: string): void {
  const fail = (reason: string, tensor: string): never => {
    throw new MalformedTensorFileError(`${file}: not a consistent LoRA adapter: ${reason}`, { path: file, tensor })
  }
  const pairs = new Map<string, { A?: LoraMatrix; B?: LoraMatrix }>()
  for (const m of matrices) {
    if (m.rows === 0 || m.cols === 0) fail(`tensor ${previewValue(m.tensor)} is ${m.rows}×${m.cols}, an empty matrix`, m.tensor)
    const pair = pairs.get(m.target) ?? {}
    const twin = pair[m.side]
    if (twin) fail(`${m.target} has two lora_${m.side} tensors, ${previewValue(twin.tensor)} and ${previewValue(m.tensor)}`, m.tensor)
    pairs.set(m.target, { ...pair, [m.side]: m })
  }
  for (const [target, { A, B }] of pairs) {
    if (!A || !B) {
      const [has, lacks] = A ? ['A', 'B'] : ['B', 'A']
      return fail(`${target} has a lora_${has} (${previewValue((A ?? B)!.tensor)}) but no lora_${lacks}`, (A ?? B)!.tensor)
    }
    if (A.rows !== B.cols) fail(`${target}: lora_A is ${A.rows}×${A.cols} (rank ${A.rows}) but lora_B is ${B.rows}×${B.cols} (rank ${B.cols})`, A.tensor)
  }
}
