import fc from 'fast-check'

/**
 * Mutations of binary inputs, as an attacker edits a file: flip a bit, set a byte to a
 * boundary value, insert or delete bytes, cut the file, repeat a slice many times (to
 * hunt work that grows faster than the input), overwrite four bytes with a boundary
 * length (pack headers and safetensors lead with lengths).
 */
export type ByteOp =
  | { op: 'flip'; at: number; bit: number }
  | { op: 'set'; at: number; byte: number }
  | { op: 'insert'; at: number; bytes: Uint8Array }
  | { op: 'delete'; at: number; length: number }
  | { op: 'truncate'; at: number }
  | { op: 'repeat'; at: number; length: number; times: number }
  | { op: 'u32'; at: number; value: number }

const BOUNDARY_BYTES = [0x00, 0xff, 0x7f, 0x80, 0x22, 0x5b, 0x5d, 0x7b, 0x7d, 0x2c, 0x3a, 0x5c, 0x30, 0x39, 0x2d, 0x65]
const BOUNDARY_U32 = [0, 1, 7, 8, 0x7f, 0xff, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff, 1 << 20, 1 << 24, 1 << 30]

const at = fc.nat()

export const byteOp: fc.Arbitrary<ByteOp> = fc.oneof(
  fc.record({ op: fc.constant('flip' as const), at, bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ op: fc.constant('set' as const), at, byte: fc.oneof(fc.constantFrom(...BOUNDARY_BYTES), fc.integer({ min: 0, max: 255 })) }),
  fc.record({ op: fc.constant('insert' as const), at, bytes: fc.uint8Array({ minLength: 1, maxLength: 64 }) }),
  fc.record({ op: fc.constant('delete' as const), at, length: fc.integer({ min: 1, max: 256 }) }),
  fc.record({ op: fc.constant('truncate' as const), at }),
  fc.record({ op: fc.constant('repeat' as const), at, length: fc.integer({ min: 1, max: 64 }), times: fc.oneof(fc.integer({ min: 2, max: 16 }), fc.constantFrom(1000, 10_000)) }),
  fc.record({ op: fc.constant('u32' as const), at, value: fc.constantFrom(...BOUNDARY_U32) }),
)

/** `bytes` with one mutation applied (positions wrap around the input's length). */
export function applyByteOp(bytes: Buffer, m: ByteOp): Buffer {
  const place = m.at % (bytes.length + 1)
  switch (m.op) {
    case 'flip':
      return withByte(bytes, place, (b) => b ^ (1 << m.bit))
    case 'set':
      return withByte(bytes, place, () => m.byte)
    case 'insert':
      return Buffer.concat([bytes.subarray(0, place), m.bytes, bytes.subarray(place)])
    case 'delete':
      return Buffer.concat([bytes.subarray(0, place), bytes.subarray(place + m.length)])
    case 'truncate':
      return bytes.subarray(0, place)
    case 'repeat': {
      const slice = bytes.subarray(place, place + m.length)
      return Buffer.concat([bytes.subarray(0, place), ...Array<Buffer>(m.times).fill(slice), bytes.subarray(place + m.length)])
    }
    case 'u32': {
      if (bytes.length < 4) return bytes
      const copy = Buffer.from(bytes)
      copy.writeUInt32LE(m.value >>> 0, Math.min(place, bytes.length - 4))
      return copy
    }
  }
}

function withByte(bytes: Buffer, place: number, change: (b: number) => number): Buffer {
  if (place >= bytes.length) return bytes
  const copy = Buffer.from(bytes)
  copy[place] = change(copy[place]!) & 0xff
  return copy
}

/** A seed from `seeds` with one to eight byte mutations applied. */
export function mutatedBytes(seeds: Buffer[]): fc.Arbitrary<Buffer> {
  return fc
    .record({ seed: fc.integer({ min: 0, max: seeds.length - 1 }), ops: fc.array(byteOp, { minLength: 1, maxLength: 8 }) })
    .map(({ seed, ops }) => ops.reduce(applyByteOp, seeds[seed]!))
}
