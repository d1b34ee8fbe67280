import { describe, expect, it } from 'vitest'
import { MalformedTensorFileError, decodeFloats, encodeFloats, parseSafetensors, writeSafetensors } from '../../../src/index.js'

/** A file of one header (as given, padded to 8) and `data` bytes. */
function fileOf(header: unknown, data = Buffer.alloc(0)): Buffer {
  const json = Buffer.from(typeof header === 'string' ? header : JSON.stringify(header))
  const length = Buffer.alloc(8)
  length.writeBigUInt64LE(BigInt(json.length))
  return Buffer.concat([length, json, data])
}

describe('safetensors', () => {
  it('round-trips F32, F16 and BF16 tensors, raw tensors and metadata', () => {
    const values = new Float32Array([0, 1, -2, 0.5, 1.5, -0.25, 3, 1024])
    const bytes = writeSafetensors(
      [
        { name: 'a.f32', dtype: 'F32', shape: [2, 4], values },
        { name: 'b.f16', dtype: 'F16', shape: [8], values },
        { name: 'c.bf16', dtype: 'BF16', shape: [4, 2], values },
        { name: 'd.i32', dtype: 'I32', shape: [2], raw: new Uint8Array([1, 0, 0, 0, 255, 255, 255, 255]) },
      ],
      { format: 'pt' },
    )
    expect(bytes.readBigUInt64LE(0) % 8n).toBe(0n)
    const file = parseSafetensors(bytes, 'x.safetensors')
    expect(file.metadata).toEqual({ format: 'pt' })
    expect(file.tensors.map((t) => [t.name, t.dtype, t.shape])).toEqual([
      ['a.f32', 'F32', [2, 4]],
      ['b.f16', 'F16', [8]],
      ['c.bf16', 'BF16', [4, 2]],
      ['d.i32', 'I32', [2]],
    ])
    for (const t of file.tensors.slice(0, 3)) expect([...decodeFloats(bytes.subarray(t.begin, t.end), t.dtype as 'F32')]).toEqual([...values])
    const raw = file.tensors[3]!
    expect([...bytes.subarray(raw.begin, raw.end)]).toEqual([1, 0, 0, 0, 255, 255, 255, 255])
  })

  it('rounds to the nearest half and bfloat16, ties to even, with the bits the formats define', () => {
    const f16 = (x: number) => Buffer.from(encodeFloats(new Float32Array([x]), 'F16')).readUInt16LE(0)
    const bf16 = (x: number) => Buffer.from(encodeFloats(new Float32Array([x]), 'BF16')).readUInt16LE(0)
    expect([f16(1), f16(-2), f16(65504), f16(1e6), f16(2 ** -24), f16(0.1)]).toEqual([0x3c00, 0xc000, 0x7bff, 0x7c00, 0x0001, 0x2e66])
    expect(f16(1 + 2 ** -11)).toBe(0x3c00) // halfway between 1 and the next half: to the even one
    expect(f16(1 + 3 * 2 ** -11)).toBe(0x3c02)
    expect([bf16(1), bf16(-2), bf16(1 + 2 ** -8), bf16(1 + 3 * 2 ** -8)]).toEqual([0x3f80, 0xc000, 0x3f80, 0x3f82])
    expect(Number.isNaN(decodeFloats(encodeFloats(new Float32Array([NaN]), 'BF16'), 'BF16')[0])).toBe(true)
    expect(decodeFloats(encodeFloats(new Float32Array([0.1]), 'F16'), 'F16')[0]).toBeCloseTo(0.0999755859375, 12)
  })

  const eight = Buffer.alloc(8)
  const malformed: Array<[string, Buffer, RegExp]> = [
    ['shorter than its length field', Buffer.alloc(5), /shorter than the header length/],
    [
      'a header over the cap',
      (() => {
        const b = Buffer.alloc(16)
        b.writeBigUInt64LE(200n * 1024n * 1024n)
        return b
      })(),
      /over the .*cap/,
    ],
    [
      'a header past the end',
      (() => {
        const b = Buffer.alloc(16)
        b.writeBigUInt64LE(100n)
        return b
      })(),
      /past the end/,
    ],
    ['a header that is not JSON', fileOf('{"a": '), /not JSON/],
    ['a header that is a list', fileOf([1]), /not a JSON object/],
    ['an unknown dtype', fileOf({ t: { dtype: 'F8', shape: [1], data_offsets: [0, 1] } }, Buffer.alloc(1)), /unknown dtype/],
    ['a shape that is not sizes', fileOf({ t: { dtype: 'U8', shape: [-1], data_offsets: [0, 1] } }, Buffer.alloc(1)), /shape/],
    ['offsets backwards', fileOf({ t: { dtype: 'U8', shape: [1], data_offsets: [1, 0] } }, Buffer.alloc(1)), /data_offsets/],
    ['a size that does not fit the shape', fileOf({ t: { dtype: 'F32', shape: [2], data_offsets: [0, 4] } }, Buffer.alloc(4)), /takes 8/],
    ['overlapping tensors', fileOf({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: { dtype: 'F32', shape: [1], data_offsets: [4, 8] } }, eight), /overlaps/],
    ['bytes no tensor holds', fileOf({ a: { dtype: 'F32', shape: [1], data_offsets: [4, 8] } }, eight), /belong to no tensor/],
    ['a tensor past the end', fileOf({ a: { dtype: 'F32', shape: [4], data_offsets: [0, 16] } }, eight), /end at byte .* but the file is/],
    ['bytes after the last tensor', fileOf({ a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] } }, eight), /end at byte .* but the file is/],
    ['metadata that is not strings', fileOf({ __metadata__: { a: 1 } }), /__metadata__/],
  ]
  for (const [what, bytes, message] of malformed) {
    it(`refuses ${what} (exit 5)`, () => {
      const err = (() => {
        try {
          parseSafetensors(bytes, 'bad.safetensors')
        } catch (e) {
          return e
        }
      })()
      expect(err).toBeInstanceOf(MalformedTensorFileError)
      expect((err as MalformedTensorFileError).exitCode).toBe(5)
      expect((err as Error).message).toMatch(message)
      expect((err as Error).message).toContain('bad.safetensors')
    })
  }
})
