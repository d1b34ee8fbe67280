import { MalformedTensorFileError } from '../../errors/index.js'
import { MAX_JSON_DEPTH, jsonTextTooDeep } from '../../util/jsonDepth.js'
import { previewValue } from '../../util/previewValue.js'

/**
 * The safetensors format (huggingface/safetensors): an unsigned 64-bit little-endian
 * header length N, N bytes of JSON `{name: {dtype, shape, data_offsets: [begin, end]}}`
 * (plus an optional `__metadata__` of string values), then the tensors' raw little-endian
 * bytes, offsets relative to the end of the header. Read and written here: the npm
 * package for it is unmaintained and reads only.
 */
export const DTYPE_BYTES = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U64: 8, U32: 4, U16: 2, U8: 1, BOOL: 1 } as const
export type Dtype = keyof typeof DTYPE_BYTES
/** The dtypes a merge computes with (as Float32) and writes back. */
export const FLOAT_DTYPES = ['F32', 'F16', 'BF16'] as const
export type FloatDtype = (typeof FLOAT_DTYPES)[number]

/** A header larger than this is refused before it is parsed (the format's own reader caps it at 100 MB too). */
export const MAX_HEADER_BYTES = 100 * 1024 * 1024

export interface TensorInfo {
  name: string
  dtype: Dtype
  shape: number[]
  /** Byte range in the file (not the data section). */
  begin: number
  end: number
}

export interface SafetensorsFile {
  /** In the order of their bytes. */
  tensors: TensorInfo[]
  metadata: Record<string, string> | null
  /** Where the data section starts: 8 + the header's length. */
  dataStart: number
}

/**
 * Parse and check a safetensors file's header against its length; `where` names it in
 * errors. `bytes` may hold only the file's start, when `fileSize` says how long it is.
 */
export function parseSafetensors(bytes: Uint8Array, where: string, fileSize = bytes.length): SafetensorsFile {
  const fail = (reason: string, tensor?: string): never => {
    throw new MalformedTensorFileError(`${where}: not a well-formed safetensors file: ${reason}`, { path: where, ...(tensor !== undefined ? { tensor } : {}) })
  }
  if (bytes.length < 8) fail(`it is ${bytes.length} bytes, shorter than the header length`)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const headerLength = view.getBigUint64(0, true)
  if (headerLength > BigInt(MAX_HEADER_BYTES)) fail(`its header claims ${headerLength} bytes, over the ${MAX_HEADER_BYTES}-byte cap`)
  const dataStart = 8 + Number(headerLength)
  if (dataStart > fileSize) fail(`its header claims ${headerLength} bytes, past the end of the file`)
  if (dataStart > bytes.length) fail(`its header claims ${headerLength} bytes, more than the ${bytes.length} given`)
  const headerText = Buffer.from(bytes.buffer, bytes.byteOffset + 8, Number(headerLength))
  if (jsonTextTooDeep(headerText)) fail(`its header nests deeper than ${MAX_JSON_DEPTH} levels`)
  let header: unknown
  try {
    header = JSON.parse(headerText.toString('utf8'))
  } catch (err) {
    fail(`its header is not JSON (${(err as Error).message})`)
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) fail('its header is not a JSON object')
  let metadata: Record<string, string> | null = null
  const tensors: TensorInfo[] = []
  for (const [name, value] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.values(value).every((v) => typeof v === 'string'))
        fail('__metadata__ must map names to strings')
      metadata = value as Record<string, string>
      continue
    }
    tensors.push(tensorInfo(name, value, dataStart, fail))
  }
  tensors.sort((a, b) => a.begin - b.begin || a.end - b.end)
  let at = dataStart
  for (const t of tensors) {
    if (t.begin < at) fail(`tensor ${previewValue(t.name)} overlaps the one before it`, t.name)
    if (t.begin > at) fail(`${t.begin - at} bytes before tensor ${previewValue(t.name)} belong to no tensor`, t.name)
    at = t.end
  }
  if (at !== fileSize) fail(`its tensors end at byte ${at}, but the file is ${fileSize} bytes`)
  return { tensors, metadata, dataStart }
}

function tensorInfo(name: string, value: unknown, dataStart: number, fail: (reason: string, tensor?: string) => never): TensorInfo {
  const quoted = previewValue(name)
  if (typeof value !== 'object' || value === null) return fail(`tensor ${quoted} is not an object`, name)
  const { dtype, shape, data_offsets: offsets } = value as Record<string, unknown>
  if (typeof dtype !== 'string' || !Object.hasOwn(DTYPE_BYTES, dtype)) return fail(`tensor ${quoted} has an unknown dtype ${previewValue(dtype)}`, name)
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) return fail(`tensor ${quoted} has a shape that is not a list of sizes`, name)
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0) || offsets[0] > offsets[1])
    return fail(`tensor ${quoted} has data_offsets that are not [begin, end]`, name)
  const [begin, end] = offsets as [number, number]
  const size = (shape as number[]).reduce((n, d) => n * d, 1) * DTYPE_BYTES[dtype as Dtype]
  if (end - begin !== size) return fail(`tensor ${quoted} spans ${end - begin} bytes, but ${dtype} ${previewValue(shape)} takes ${size}`, name)
  return { name, dtype: dtype as Dtype, shape: shape as number[], begin: dataStart + begin, end: dataStart + end }
}

/** A tensor to write: its values as Float32, written in `dtype`; or its raw bytes as they are. */
export type TensorToWrite = { name: string; shape: number[] } & ({ dtype: FloatDtype; values: Float32Array } | { dtype: Dtype; raw: Uint8Array })

/** A safetensors file of `tensors`, in the order given, the header padded with spaces to 8 bytes as the format's writer does. */
export function writeSafetensors(tensors: TensorToWrite[], metadata: Record<string, string> | null = null): Buffer {
  const datas = tensors.map(tensorBytes)
  return Buffer.concat([
    safetensorsHeader(
      tensors.map((t, i) => ({ ...t, length: datas[i]!.length })),
      metadata,
    ),
    ...datas,
  ])
}

/** A tensor's bytes as the file holds them. */
export function tensorBytes(t: TensorToWrite): Uint8Array {
  return 'values' in t ? encodeFloats(t.values, t.dtype) : t.raw
}

/** The length field and header of a file whose tensors, of these byte lengths, follow in this order. */
export function safetensorsHeader(tensors: Array<{ name: string; dtype: Dtype; shape: number[]; length: number }>, metadata: Record<string, string> | null): Buffer {
  const header: Record<string, unknown> = Object.create(null) as Record<string, unknown> // a tensor may be named __proto__
  if (metadata) header['__metadata__'] = metadata
  let offset = 0
  for (const t of tensors) {
    const expected = t.shape.reduce((n, d) => n * d, 1) * DTYPE_BYTES[t.dtype]
    if (t.length !== expected)
      throw new MalformedTensorFileError(`tensor ${JSON.stringify(t.name)}: ${t.length} bytes given for ${t.dtype} ${JSON.stringify(t.shape)}, which takes ${expected}`, {
        tensor: t.name,
      })
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.length] }
    offset += t.length
  }
  let json = Buffer.from(JSON.stringify(header), 'utf8')
  if (json.length % 8 !== 0) json = Buffer.concat([json, Buffer.alloc(8 - (json.length % 8), 0x20)])
  const length = Buffer.alloc(8)
  length.writeBigUInt64LE(BigInt(json.length))
  return Buffer.concat([length, json])
}

/** A tensor's values as Float32 (F32, F16 and BF16 only). */
export function decodeFloats(bytes: Uint8Array, dtype: FloatDtype): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (dtype === 'F32' && LITTLE_ENDIAN) return new Float32Array(Uint8Array.prototype.slice.call(bytes).buffer) // a copy (Buffer.slice would be a view): aligned, and the caller's to change
  const out = new Float32Array(bytes.length / DTYPE_BYTES[dtype])
  if (dtype === 'F32') for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true)
  else if (dtype === 'BF16') for (let i = 0; i < out.length; i++) out[i] = bf16ToFloat(view.getUint16(i * 2, true))
  else for (let i = 0; i < out.length; i++) out[i] = f16ToFloat(view.getUint16(i * 2, true))
  return out
}

/** Float32 values in `dtype`, rounded to nearest, ties to even. */
export function encodeFloats(values: Float32Array, dtype: FloatDtype): Uint8Array {
  if (dtype === 'F32' && LITTLE_ENDIAN) return new Uint8Array(values.buffer, values.byteOffset, values.byteLength)
  const out = new Uint8Array(values.length * DTYPE_BYTES[dtype])
  const view = new DataView(out.buffer)
  if (dtype === 'F32') for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i]!, true)
  else if (dtype === 'BF16') for (let i = 0; i < values.length; i++) view.setUint16(i * 2, floatToBf16(values[i]!), true)
  else for (let i = 0; i < values.length; i++) view.setUint16(i * 2, floatToF16(values[i]!), true)
  return out
}

const scratch = new DataView(new ArrayBuffer(4))
/** The format is little-endian; so is nearly every machine, where F32 bytes are a Float32Array as they are. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

function bf16ToFloat(bits: number): number {
  scratch.setUint32(0, bits << 16)
  return scratch.getFloat32(0)
}

function floatToBf16(value: number): number {
  scratch.setFloat32(0, value)
  const bits = scratch.getUint32(0)
  if ((bits & 0x7f800000) === 0x7f800000 && (bits & 0x7fffff) !== 0) return (bits >>> 16) | 0x40 // NaN stays a NaN
  return (bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16
}

function f16ToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1
  const exponent = (bits >>> 10) & 0x1f
  const fraction = bits & 0x3ff
  if (exponent === 0) return sign * fraction * 2 ** -24
  if (exponent === 0x1f) return fraction ? NaN : sign * Infinity
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15)
}

function floatToF16(value: number): number {
  scratch.setFloat32(0, value)
  const bits = scratch.getUint32(0)
  const sign = (bits >>> 16) & 0x8000
  const exponent = (bits >>> 23) & 0xff
  const mantissa = bits & 0x7fffff
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0)
  const e = exponent - 127 + 15
  if (e >= 0x1f) return sign | 0x7c00 // too large: infinity
  if (e <= 0) {
    if (e < -10) return sign // too small: zero
    const m = mantissa | 0x800000
    const shift = 14 - e
    const half = 1 << (shift - 1)
    const rounded = (m + half - 1 + ((m >>> shift) & 1)) >>> shift
    return sign | rounded
  }
  const rounded = mantissa + 0xfff + ((mantissa >>> 13) & 1)
  if (rounded & 0x800000) return e + 1 >= 0x1f ? sign | 0x7c00 : sign | ((e + 1) << 10)
  return sign | (e << 10) | (rounded >>> 13)
}
