import { createHash } from 'node:crypto'

/** How two adapters' changes from their merge base combine (docs/model.md). */
export type ModelMergeMethod = 'linear' | 'ties' | 'dare' | 'dare-ties'
export const MODEL_MERGE_METHODS: readonly ModelMergeMethod[] = ['linear', 'ties', 'dare', 'dare-ties']

export interface ModelMergeOptions {
  method: ModelMergeMethod
  /** TIES: the fraction of each task vector's entries kept, by magnitude (default 0.5). */
  density?: number
  /** DARE: the probability each task-vector entry is dropped (default 0.5); survivors are scaled by 1 / (1 - p). */
  dropRate?: number
  /** DARE's random drops are a function of this seed, the file, the tensor and the side (default 0). */
  seed?: number
  /** Weights of ours and theirs (default 1 each). */
  weights?: [number, number]
}

export const DEFAULT_DENSITY = 0.5
export const DEFAULT_DROP_RATE = 0.5

/** Where a tensor is, for the seeded drops: the same seed gives the same drops for the same tensor, in any order. */
export interface TensorPlace {
  file: string
  tensor: string
}

/**
 * Merge one tensor three-way: task vectors τ = side − base, combined by `method` as
 * mergekit and PEFT define it, added back to the base. Linear: the weighted mean of the
 * task vectors. TIES: each τ trimmed to its `density` largest magnitudes, the sign of
 * each entry elected by the weighted sum, and the mean of the entries that agree with
 * it. DARE: each entry of τ dropped with probability `dropRate`, survivors rescaled, then
 * the weighted mean (`dare`) or TIES' election and mean (`dare-ties`).
 */
export function mergeTensor(base: Float32Array, ours: Float32Array, theirs: Float32Array, options: ModelMergeOptions, place: TensorPlace): Float32Array {
  const [wa, wb] = options.weights ?? [1, 1]
  const a = taskVector(ours, base)
  const b = taskVector(theirs, base)
  if (options.method === 'ties') {
    const density = options.density ?? DEFAULT_DENSITY
    trimToDensity(a, density)
    trimToDensity(b, density)
  }
  if (options.method === 'dare' || options.method === 'dare-ties') {
    const rate = options.dropRate ?? DEFAULT_DROP_RATE
    dropAndRescale(a, rate, rngFor(options.seed ?? 0, place, 0))
    dropAndRescale(b, rate, rngFor(options.seed ?? 0, place, 1))
  }
  const electing = options.method === 'ties' || options.method === 'dare-ties'
  return electing ? electedMean(base, a, b, wa, wb) : weightedMean(base, a, b, wa, wb)
}

/** base + (wa·a + wb·b) / (wa + wb), entry by entry. */
function weightedMean(base: Float32Array, a: Float32Array, b: Float32Array, wa: number, wb: number): Float32Array {
  const merged = new Float32Array(base.length)
  const total = wa + wb
  for (let i = 0; i < base.length; i++) merged[i] = base[i]! + (wa * a[i]! + wb * b[i]!) / total
  return merged
}

/** TIES' election: per entry, the sign of wa·a + wb·b, and the weighted mean of the entries of that sign (none: the base). */
function electedMean(base: Float32Array, a: Float32Array, b: Float32Array, wa: number, wb: number): Float32Array {
  const merged = new Float32Array(base.length)
  for (let i = 0; i < base.length; i++) {
    const x = wa * a[i]!
    const y = wb * b[i]!
    const sum = x + y
    let delta = 0
    if (sum > 0) delta = x > 0 && y > 0 ? sum / (wa + wb) : x > 0 ? x / wa : y / wb
    else if (sum < 0) delta = x < 0 && y < 0 ? sum / (wa + wb) : x < 0 ? x / wa : y / wb
    merged[i] = base[i]! + delta
  }
  return merged
}

function taskVector(side: Float32Array, base: Float32Array): Float32Array {
  const out = new Float32Array(base.length)
  for (let i = 0; i < base.length; i++) out[i] = side[i]! - base[i]!
  return out
}

/**
 * Zero all but the round(density × n) entries of largest magnitude (ties at the
 * threshold kept in index order), in place, in linear time.
 */
export function trimToDensity(values: Float32Array, density: number): void {
  const keep = Math.round(Math.min(1, Math.max(0, density)) * values.length)
  if (keep >= values.length) return
  if (keep === 0) return void values.fill(0)
  const magnitudes = new Float32Array(values.length)
  for (let i = 0; i < values.length; i++) magnitudes[i] = Math.abs(values[i]!)
  const threshold = kthLargest(magnitudes, keep)
  let above = 0
  for (let i = 0; i < values.length; i++) if (magnitudes[i]! > threshold) above++
  let atThreshold = keep - above
  for (let i = 0; i < values.length; i++) {
    const m = magnitudes[i]!
    if (m > threshold) continue
    if (m === threshold && atThreshold > 0) atThreshold--
    else values[i] = 0
  }
}

/**
 * The k-th largest (1-based) of non-negative floats, by a radix select on their bits
 * (which order as the floats do): two counting passes, no sorting, `values` unchanged.
 */
function kthLargest(values: Float32Array, k: number): number {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length)
  const high = new Uint32Array(65536)
  for (let i = 0; i < bits.length; i++) high[bits[i]! >>> 16]!++
  let rest = k
  let top = 65535
  while (high[top]! < rest) rest -= high[top--]!
  const low = new Uint32Array(65536)
  for (let i = 0; i < bits.length; i++) if (bits[i]! >>> 16 === top) low[bits[i]! & 0xffff]!++
  let bottom = 65535
  while (low[bottom]! < rest) rest -= low[bottom--]!
  return new Float32Array(new Uint32Array([((top << 16) | bottom) >>> 0]).buffer)[0]!
}

/** DARE: each entry dropped with probability `rate`, the survivors scaled by 1 / (1 - rate), in place. */
export function dropAndRescale(values: Float32Array, rate: number, random: () => number): void {
  if (rate <= 0) return
  if (rate >= 1) return void values.fill(0)
  const scale = 1 / (1 - rate)
  for (let i = 0; i < values.length; i++) values[i] = random() < rate ? 0 : values[i]! * scale
}

/** A seeded stream for one side of one tensor: mulberry32, its state from the seed and the place. */
export function rngFor(seed: number, place: TensorPlace, side: number): () => number {
  let state = createHash('sha256').update(`${seed}\0${place.file}\0${place.tensor}\0${side}`).digest().readUInt32LE(0)
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
