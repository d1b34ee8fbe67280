/**
 * A thread of `FrameCheckers`: decompresses a pack's frame, checks it against its index
 * and every object against its digest, answers with the objects that look structured
 * (the caller parses them), and keeps the frame until told which files its blobs fill.
 */
import { parentPort } from 'node:worker_threads'
import { sha256 } from '../../objects/digest.js'
import { writeNewFileSync } from '../../util/fsx.js'
import { requirePackage } from '../../util/requirePackage.js'
import type { CheckFrame, CheckReply, WriteFrame, WriteReply } from './FrameCheckers.js'

const { DCtx } = requirePackage('zstd-napi/binding.js') as typeof import('zstd-napi/binding.js')
const dctx = new DCtx()
/** Checked frames waiting for their writes, by job id. */
const held = new Map<number, { bytes: Buffer; objects: CheckFrame['objects'] }>()

parentPort!.on('message', (message: CheckFrame | WriteFrame) => {
  parentPort!.postMessage(message.type === 'check' ? check(message) : write(message))
})

function check({ id, compressed, size, objects }: CheckFrame): CheckReply {
  let bytes: Buffer
  let produced: number
  try {
    bytes = Buffer.allocUnsafe(size)
    produced = dctx.decompress(bytes, new Uint8Array(compressed)) // fails past `size`: a bomb stops at what the index declares
  } catch (err) {
    return { id, failure: { kind: 'frame', message: (err as Error).message } }
  }
  if (produced !== size) return { id, failure: { kind: 'frame', message: `it decompresses to ${produced} bytes, not ${size}` } }
  const structured: Array<[number, Uint8Array]> = []
  for (let i = 0; i < objects.length; i++) {
    const [digest, offset, length] = objects[i]!
    const object = bytes.subarray(offset, offset + length)
    const actual = sha256(object)
    if (actual !== digest) return { id, failure: { kind: 'digest', digest, actual } }
    if (length >= 2 && object[0] === 0x7b && object[1] === 0x22) structured.push([i, Uint8Array.prototype.slice.call(object)]) // `{"`, as `objectFromBytes` tells a structured object
  }
  held.set(id, { bytes, objects })
  return { id, failure: null, structured }
}

function write({ id, writes }: WriteFrame): WriteReply {
  const frame = held.get(id)
  held.delete(id)
  if (frame === undefined) return { id, failure: { message: `frame ${id} is not held here`, code: null, path: '' } }
  for (const [object, path, mode] of writes) {
    const [, offset, length] = frame.objects[object]!
    const file = typeof path === 'string' ? path : Buffer.from(path.buffer, path.byteOffset, path.byteLength)
    try {
      writeNewFileSync(file, frame.bytes.subarray(offset, offset + length), mode)
    } catch (err) {
      const { code, message } = err as NodeJS.ErrnoException
      return { id, failure: { message, code: code ?? null, path: Buffer.from(path).toString() } }
    }
  }
  return { id, failure: null }
}
