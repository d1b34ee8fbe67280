import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { DigestSet } from '../../src/registry/transfer/DigestSet.js'
import type { Digest } from '../../src/objects/digest.js'

const digest = (hex: string): Digest => `sha256:${hex}`
const random = () => digest(randomBytes(32).toString('hex'))

describe('DigestSet', () => {
  it('sorts as the hex strings do, drops repeats, and answers membership, also for digests sharing their leading bytes', () => {
    const shared = randomBytes(8).toString('hex')
    const digests = [...Array.from({ length: 3000 }, random), ...Array.from({ length: 40 }, () => digest(shared + randomBytes(24).toString('hex')))]
    const withRepeats = [...digests, digests[3]!, digests[3010]!, digests[0]!]
    const set = DigestSet.of(withRepeats)
    const sorted = [...new Set(digests)].map((d) => d.slice(7)).sort()
    expect(set.size).toBe(sorted.length)
    expect(set.buffer.toString('hex')).toBe(sorted.join(''))
    for (const d of digests.slice(0, 50).concat(digests.slice(3000))) expect(set.has(d)).toBe(true)
    expect(set.has(digest('0'.repeat(64)))).toBe(false)
    expect(set.has(digest(shared + '0'.repeat(48)))).toBe(false)
  })

  it('adds a few digests in place of their insertion points; a set of what it has already is itself', () => {
    const set = DigestSet.of(Array.from({ length: 500 }, random))
    const more = [digest('0'.repeat(64)), digest('f'.repeat(64)), random(), random()]
    const grown = set.with([...more, ...more])
    expect(grown.size).toBe(set.size + 4)
    expect(grown.buffer.equals(DigestSet.of([...more, ...hexes(set).map(digest)]).buffer)).toBe(true)
    for (const d of more) expect(grown.has(d)).toBe(true)
    expect(set.with(hexes(set).slice(0, 10).map(digest))).toBe(set)
    expect(DigestSet.fromSorted(grown.buffer.subarray(0, 33))).toBeNull()
  })
})

function hexes(set: DigestSet): string[] {
  return Array.from({ length: set.size }, (_, i) => set.buffer.subarray(i * 32, (i + 1) * 32).toString('hex'))
}
