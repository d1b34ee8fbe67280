import { createHash, randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { DEFAULT_CHUNKING, chunkBuffer, chunkStream } from '../../src/world/fastcdc.js'

const hash = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

describe('FastCDC', () => {
  const data = randomBytes(24 * 1024 * 1024)

  it('cuts chunks within the size bounds that concatenate back to the input', () => {
    const chunks = chunkBuffer(data)
    expect(Buffer.concat(chunks).equals(data)).toBe(true)
    for (const c of chunks.slice(0, -1)) {
      expect(c.length).toBeGreaterThanOrEqual(DEFAULT_CHUNKING.minSize)
      expect(c.length).toBeLessThanOrEqual(DEFAULT_CHUNKING.maxSize)
    }
    const avg = data.length / chunks.length
    expect(avg).toBeGreaterThan(DEFAULT_CHUNKING.avgSize / 2)
    expect(avg).toBeLessThan(DEFAULT_CHUNKING.avgSize * 2)
  })

  it('cuts a stream exactly where it cuts the whole buffer, whatever the read sizes', async () => {
    const pieces: Buffer[] = []
    for (let i = 0; i < data.length; i += 1_000_003) pieces.push(data.subarray(i, i + 1_000_003))
    const streamed: Buffer[] = []
    for await (const c of chunkStream(Readable.from(pieces))) streamed.push(Buffer.from(c))
    expect(streamed.map(hash)).toEqual(chunkBuffer(data).map(hash))
  })

  it('keeps most chunks when bytes are inserted in the middle', () => {
    const edited = Buffer.concat([data.subarray(0, 10_000_000), randomBytes(4096), data.subarray(10_000_000)])
    const before = new Set(chunkBuffer(data).map(hash))
    const after = chunkBuffer(edited)
    const sharedBytes = after.filter((c) => before.has(hash(c))).reduce((n, c) => n + c.length, 0)
    expect(sharedBytes / edited.length).toBeGreaterThan(0.85)
  })
})
