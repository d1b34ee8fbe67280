import { createCipheriv, createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { DEFAULT_CHUNKING, chunkBuffer, chunkStream } from '../../src/world/scan/fastcdc.js'

const hash = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

/** Random-looking bytes that are the same at every run (AES-CTR of zeros under a key named by `seed`): a test whose data changed from run to run failed once in a while, when the edit fell in a chunk of the largest size. */
const seededBytes = (seed: string, size: number) =>
  createCipheriv('aes-128-ctr', createHash('sha256').update(seed).digest().subarray(0, 16), Buffer.alloc(16)).update(Buffer.alloc(size))

describe('FastCDC', () => {
  const data = seededBytes('fastcdc data', 24 * 1024 * 1024)

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
    const edited = Buffer.concat([data.subarray(0, 10_000_000), seededBytes('fastcdc insertion', 4096), data.subarray(10_000_000)])
    const before = new Set(chunkBuffer(data).map(hash))
    const after = chunkBuffer(edited)
    const sharedBytes = after.filter((c) => before.has(hash(c))).reduce((n, c) => n + c.length, 0)
    expect(sharedBytes / edited.length).toBeGreaterThan(0.85)
  })
})
