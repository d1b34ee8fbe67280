import { createHash } from 'node:crypto'
import { mulberry32 } from '../../util/mulberry32.js'

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
  return mergeTensorInPlace(base.slice(), ours.slice(), theirs.slice(), options, place)
}

/**
 * `mergeTensor`, turning `ours` and `theirs` into their task vectors in place and
 * writing the result over `base`, which it returns: a merge of hundreds of tensors
 * allocates nothing per tensor (the garbage cost as much as the arithmetic).
 */
export function mergeTensorInPlace(base: Float32Array, ours: Float32Array, theirs: Float32Array, options: ModelMergeOptions, place: TensorPlace): Float32Array {
  const [wa, wb] = options.weights ?? [1, 1]
  const a = toTaskVector(ours, base)
  const b = toTaskVector(theirs, base)
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
  const total = wa + wb
  for (let i = 0; i < base.length; i++) base[i] = base[i]! + (wa * a[i]! + wb * b[i]!) / total
  return base
}

/** TIES' election: per entry, the sign of wa·a + wb·b, and the weighted mean of the entries of that sign (none: the base). */
function electedMean(base: Float32Array, a: Float32Array, b: Float32Array, wa: number, wb: number): Float32Array {
  // without branches: the signs are a coin toss per entry, and mispredicted branches cost more than the arithmetic
  for (let i = 0; i < base.length; i++) {
    const x = wa * a[i]!
    const y = wb * b[i]!
    const sum = x + y
    const agreesX = +(x * sum > 0) // same sign as the sum, and not zero
    const agreesY = +(y * sum > 0)
    const weight = agreesX * wa + agreesY * wb
    base[i] = base[i]! + (agreesX * x + agreesY * y) / (weight + +(weight === 0))
  }
  return base
}

/** side − base, written over side. */
function toTaskVector(side: Float32Array, base: Float32Array): Float32Array {
  for (let i = 0; i < base.length; i++) side[i] = side[i]! - base[i]!
  return side
}

/**
 * Zero all but the round(density × n) entries of largest magnitude (ties at the
 * threshold kept in index order), in place, in linear time: a float's magnitude orders
 * as its bits without the sign do, so the threshold is found by a radix select on
 * those bits (two counting passes), and nothing is sorted or allocated.
 */
export function trimToDensity(values: Float32Array, density: number): void {
  const keep = Math.round(Math.min(1, Math.max(0, density)) * values.length)
  if (keep >= values.length) return
  if (keep === 0) return void values.fill(0)
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length)
  const high = HIGH.fill(0)
  for (let i = 0; i < bits.length; i++) high[(bits[i]! & 0x7fffffff) >>> 16]!++
  let rest = keep
  let top = 0x7fff
  while (high[top]! < rest) rest -= high[top--]!
  const low = LOW.fill(0)
  for (let i = 0; i < bits.length; i++) {
    const m = bits[i]! & 0x7fffffff
    if (m >>> 16 === top) low[m & 0xffff]!++
  }
  let bottom = 0xffff
  while (low[bottom]! < rest) rest -= low[bottom--]!
  // `rest` entries at the threshold are kept, the first ones
  const threshold = ((top << 16) | bottom) >>> 0
  for (let i = 0; i < bits.length; i++) {
    const m = bits[i]! & 0x7fffffff
    if (m === threshold) {
      if (rest > 0) rest--
      else bits[i] = 0
    } else bits[i] = bits[i]! & -+(m > threshold) // kept or +0, without a branch to mispredict
  }
}

const HIGH = new Uint32Array(0x8000)
const LOW = new Uint32Array(0x10000)

/** DARE: each entry dropped with probability `rate`, the survivors scaled by 1 / (1 - rate), in place. */
export function dropAndRescale(values: Float32Array, rate: number, random: () => number): void {
  if (rate <= 0) return
  if (rate >= 1) return void values.fill(0)
  const scale = 1 / (1 - rate)
  for (let i = 0; i < values.length; i++) values[i] = values[i]! * scale * +(random() >= rate) // no branch: a drop is a coin toss
}

/** A seeded stream for one side of one tensor: mulberry32, its state from the seed and the place. */
export function rngFor(seed: number, place: TensorPlace, side: number): () => number {
  return mulberry32(createHash('sha256').update(`${seed}\0${place.file}\0${place.tensor}\0${side}`).digest().readUInt32LE(0))
}
