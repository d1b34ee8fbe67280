/**
 * Writing GGUF, llama.cpp's file format (version 3): the magic `GGUF`, the version, the
 * tensor and metadata counts, typed metadata key-values, tensor infos (name, dimensions
 * innermost first, ggml type, offset), then the tensors' data, each aligned to
 * `general.alignment` (32 unless given). Used to export a merged LoRA adapter that
 * llama.cpp loads.
 */

/** A metadata value, typed as GGUF stores it. */
export type GgufValue =
  | { type: 'u32'; value: number }
  | { type: 'i32'; value: number }
  | { type: 'f32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'u64'; value: bigint }
  | { type: 'strings'; value: string[] }
  | { type: 'f32s'; value: number[] }
  | { type: 'i32s'; value: number[] }

/** A tensor: its dimensions as ggml counts them (innermost first: [columns, rows]) and its values, written as F32. */
export interface GgufTensor {
  name: string
  dims: number[]
  values: Float32Array
}

const VALUE_TYPE = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9, u64: 10 } as const
const GGML_F32 = 0
export const GGUF_ALIGNMENT = 32

/** The bytes of a GGUF file holding `metadata` (in the order given) and `tensors`. */
export function writeGguf(metadata: Array<[string, GgufValue]>, tensors: GgufTensor[]): Buffer {
  const out = new ByteWriter()
  out.bytes(Buffer.from('GGUF', 'latin1'))
  out.u32(3)
  out.u64(BigInt(tensors.length))
  out.u64(BigInt(metadata.length))
  for (const [key, value] of metadata) {
    out.string(key)
    writeValue(out, value)
  }
  let offset = 0
  const offsets = tensors.map((t) => {
    const at = offset
    offset = align(at + t.values.length * 4)
    return at
  })
  tensors.forEach((t, i) => {
    if (t.dims.reduce((n, d) => n * d, 1) !== t.values.length) throw new RangeError(`tensor ${t.name}: dims ${t.dims.join('x')} do not hold ${t.values.length} values`)
    out.string(t.name)
    out.u32(t.dims.length)
    for (const d of t.dims) out.u64(BigInt(d))
    out.u32(GGML_F32)
    out.u64(BigInt(offsets[i]!))
  })
  out.pad(GGUF_ALIGNMENT)
  tensors.forEach((t) => {
    out.bytes(new Uint8Array(t.values.buffer, t.values.byteOffset, t.values.byteLength))
    out.pad(GGUF_ALIGNMENT)
  })
  return out.finish()
}

function align(n: number): number {
  return Math.ceil(n / GGUF_ALIGNMENT) * GGUF_ALIGNMENT
}

function writeValue(out: ByteWriter, v: GgufValue): void {
  switch (v.type) {
    case 'strings':
    case 'f32s':
    case 'i32s': {
      out.u32(VALUE_TYPE.array)
      out.u32(v.type === 'strings' ? VALUE_TYPE.string : v.type === 'f32s' ? VALUE_TYPE.f32 : VALUE_TYPE.i32)
      out.u64(BigInt(v.value.length))
      for (const x of v.value) {
        if (typeof x === 'string') out.string(x)
        else if (v.type === 'f32s') out.f32(x)
        else out.i32(x)
      }
      return
    }
    case 'u32':
      return (out.u32(VALUE_TYPE.u32), out.u32(v.value))
    case 'i32':
      return (out.u32(VALUE_TYPE.i32), out.i32(v.value))
    case 'f32':
      return (out.u32(VALUE_TYPE.f32), out.f32(v.value))
    case 'bool':
      return (out.u32(VALUE_TYPE.bool), out.bytes(Uint8Array.of(v.value ? 1 : 0)))
    case 'string':
      return (out.u32(VALUE_TYPE.string), out.string(v.value))
    case 'u64':
      return (out.u32(VALUE_TYPE.u64), out.u64(v.value))
  }
}

/** Little-endian bytes appended to a growing list. */
class ByteWriter {
  private parts: Uint8Array[] = []
  private length = 0

  bytes(b: Uint8Array): void {
    this.parts.push(b)
    this.length += b.length
  }
  u32(n: number): void {
    this.fixed(4, (b) => b.writeUInt32LE(n))
  }
  i32(n: number): void {
    this.fixed(4, (b) => b.writeInt32LE(n))
  }
  f32(n: number): void {
    this.fixed(4, (b) => b.writeFloatLE(n))
  }
  u64(n: bigint): void {
    this.fixed(8, (b) => b.writeBigUInt64LE(n))
  }
  private fixed(size: number, write: (b: Buffer) => void): void {
    const b = Buffer.alloc(size)
    write(b)
    this.bytes(b)
  }
  string(s: string): void {
    const b = Buffer.from(s, 'utf8')
    this.u64(BigInt(b.length))
    this.bytes(b)
  }
  pad(to: number): void {
    if (this.length % to !== 0) this.bytes(new Uint8Array(to - (this.length % to)))
  }
  finish(): Buffer {
    return Buffer.concat(this.parts, this.length)
  }
}
