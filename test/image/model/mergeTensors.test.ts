import { describe, expect, it } from 'vitest'
import { mergeTensor } from '../../../src/index.js'
import { trimToDensity } from '../../../src/image/model/mergeTensors.js'

const f = (...xs: number[]) => new Float32Array(xs)
const place = { file: 'adapter.safetensors', tensor: 'w' }
// task vectors from the base: ours τ = [1, -2, 3, 0.5], theirs τ = [2, 1, -1, 0.5]
const base = f(1, 1, 1, 1)
const ours = f(2, -1, 4, 1.5)
const theirs = f(3, 2, 0, 1.5)

describe('model merges, against hand-computed values', () => {
  it('linear: the weighted mean of the task vectors, added to the base', () => {
    expect([...mergeTensor(base, ours, theirs, { method: 'linear' }, place)]).toEqual([2.5, 0.5, 2, 1.5])
    // weights 3,1: (3·τo + 1·τt) / 4
    expect([...mergeTensor(base, ours, theirs, { method: 'linear', weights: [3, 1] }, place)]).toEqual([1 + 5 / 4, 1 - 5 / 4, 1 + 8 / 4, 1.5])
  })

  it('ties: trim to the density by magnitude, elect the sign by the sum, mean of the agreeing entries', () => {
    // trimmed to 2 of 4: ours [0, -2, 3, 0]; theirs [2, 1, 0, 0] (1 and -1 tie: the first kept)
    // elected signs of the sums [2, -1, 3, 0]: +, -, +, none -> deltas [2, -2, 3, 0]
    expect([...mergeTensor(base, ours, theirs, { method: 'ties', density: 0.5 }, place)]).toEqual([3, -1, 4, 1])
    // nothing trimmed: sums [3, -1, 2, 1] -> [(1+2)/2, -2, 3, 0.5]
    expect([...mergeTensor(base, ours, theirs, { method: 'ties', density: 1 }, place)]).toEqual([2.5, -1, 4, 1.5])
    // weights 1,3 on the untrimmed vectors: sums [7, 1, 0, 2]; index 1 elects +: theirs' 3·1 over weight 3; index 2 elects none
    expect([...mergeTensor(base, ours, theirs, { method: 'ties', density: 1, weights: [1, 3] }, place)]).toEqual([1 + 7 / 4, 2, 1, 1.5])
  })

  it('dare: with nothing dropped it is linear, with everything dropped the base; each entry dropped or scaled by 1/(1-p)', () => {
    expect([...mergeTensor(base, ours, theirs, { method: 'dare', dropRate: 0 }, place)]).toEqual([2.5, 0.5, 2, 1.5])
    expect([...mergeTensor(base, ours, theirs, { method: 'dare', dropRate: 1 }, place)]).toEqual([1, 1, 1, 1])
    const n = 2000
    const b = new Float32Array(n)
    const o = new Float32Array(n).fill(1)
    const t = new Float32Array(n).fill(-3)
    const merged = mergeTensor(b, o, t, { method: 'dare', dropRate: 0.75, seed: 7 }, place)
    // each side's entry is 0 or 4× its change; the mean of the two is one of four values
    const seen = new Set(merged)
    expect([...seen].every((v) => [0, 2, -6, -4].includes(v))).toBe(true)
    const kept = [...merged].filter((v) => v === 2 || v === -4).length / n // ours kept
    expect(kept).toBeGreaterThan(0.2)
    expect(kept).toBeLessThan(0.3)
    expect([...mergeTensor(b, o, t, { method: 'dare', dropRate: 0.75, seed: 7 }, place)]).toEqual([...merged])
    expect([...mergeTensor(b, o, t, { method: 'dare', dropRate: 0.75, seed: 8 }, place)]).not.toEqual([...merged])
    expect([...mergeTensor(b, o, t, { method: 'dare', dropRate: 0.75, seed: 7 }, { ...place, tensor: 'other' })]).not.toEqual([...merged])
  })

  it('dare-ties: with nothing dropped it is ties without trimming', () => {
    expect([...mergeTensor(base, ours, theirs, { method: 'dare-ties', dropRate: 0 }, place)]).toEqual([2.5, -1, 4, 1.5])
  })

  it('trims to exactly round(density × n) entries, the largest magnitudes, ties in index order', () => {
    let state = 1
    const random = () => (state = (state * 48271) % 2147483647) / 2147483647
    for (const density of [0.01, 0.2, 0.5, 0.93]) {
      // magnitudes 0.1 .. 5.0 in steps of 0.1, so many are equal; none is zero
      const values = Float32Array.from({ length: 10_007 }, () => ((random() < 0.5 ? -1 : 1) * (1 + Math.floor(random() * 50))) / 10)
      const original = values.slice()
      trimToDensity(values, density)
      const kept = [...values.keys()].filter((i) => values[i] !== 0)
      const dropped = [...values.keys()].filter((i) => values[i] === 0)
      expect(kept.length).toBe(Math.round(density * values.length))
      for (const i of kept) expect(values[i]).toBe(original[i])
      const threshold = Math.min(...kept.map((i) => Math.abs(original[i]!)))
      expect(Math.max(...dropped.map((i) => Math.abs(original[i]!)))).toBeLessThanOrEqual(threshold)
      // of the entries at the threshold, the first ones are kept
      const atThreshold = [...values.keys()].filter((i) => Math.abs(original[i]!) === threshold)
      const keptThere = atThreshold.filter((i) => values[i] !== 0)
      expect(keptThere).toEqual(atThreshold.slice(0, keptThere.length))
    }
  })
})
