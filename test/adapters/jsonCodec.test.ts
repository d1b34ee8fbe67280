import { describe, expect, it } from 'vitest'
import { decode, encode } from '../../src/adapters/jsonCodec.js'

describe('the codec between framework values and a run', () => {
  it('round-trips dates, bytes, URLs, errors, odd numbers and keys that look like its markers', () => {
    const value = {
      at: new Date('2026-01-02T03:04:05.678Z'),
      file: new Uint8Array([0, 1, 254, 255]),
      url: new URL('https://example.com/a?b=c'),
      nested: [{ $date: 'not a date', $$x: 1 }, Number.POSITIVE_INFINITY, null],
      error: Object.assign(new Error('boom'), { name: 'APICallError' }),
      skipped: undefined,
      signal: new AbortController().signal,
    }
    const back = decode(JSON.parse(JSON.stringify(encode(value))) as never) as Record<string, unknown>
    expect(back['at']).toEqual(value.at)
    expect(back['file']).toEqual(value.file)
    expect(back['url']).toEqual(value.url)
    expect(back['nested']).toEqual([{ $date: 'not a date', $$x: 1 }, Number.POSITIVE_INFINITY, null])
    expect(back['error']).toMatchObject({ name: 'APICallError', message: 'boom' })
    expect(Object.keys(back).sort()).toEqual(['at', 'error', 'file', 'nested', 'url'])
  })

  it('keeps a __proto__ key as data, never as the prototype', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as object
    const back = decode(JSON.parse(JSON.stringify(encode(parsed))) as never) as Record<string, unknown>
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype)
    expect((back as { polluted?: boolean }).polluted).toBeUndefined()
    expect(Object.keys(back).sort()).toEqual(['__proto__', 'a'])
  })
})
