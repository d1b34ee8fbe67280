/**
 * A thread of `FrameCheckers`: decompresses a pack's frame, checks it against its index
 * and every object against its digest, answers with the objects that look structured
 * (the caller parses them), and keeps the frame until told which files its blobs fill.
 */
import { createHash } from 'node:crypto'
import { closeSync, fchmodSync, openSync, writeSync } from 'node:fs'
import { parentPort } from 'node:worker_threads'
import type { CheckFrame, CheckReply, FrameFailure, WriteFrame, WriteReply } from './FrameCheckers.js'
import type { Digest } from '../store/digest.js'
import { requirePackage } from '../util/requirePackage.js'

const { DCtx } = requirePackage('zstd-napi/binding.js') as typeof import('zstd-napi/binding.js')
const dctx = new DCtx()
/** Checked frames waiting for their writes, by job id. */
const held = new Map<number, { bytes: Buffer; objects: CheckFrame['objects'] }>()

parentPort!.on('message', (message: CheckFrame | WriteFrame) => {
  if (message.type === 'check') parentPort!.postMessage(check(message))
  else parentPort!.postMessage(write(message))
})

function check({ id, compressed, size, objects }: CheckFrame): CheckReply {
  const bytes = Buffer.allocUnsafe(size)
  let produced: number
  try {
    produced = dctx.decompress(bytes, new Uint8Array(compressed)) // fails past `size`: a bomb stops at what the index declares
  } catch (err) {
    return { id, failure: { kind: 'frame', message: (err as Error).message } }
  }
  if (produced !== size) return { id, failure: { kind: 'frame', message: `it decompresses to ${produced} bytes, not the ${size} its index declares` } }
  const structured: CheckReply['structured'] = []
  for (let i = 0; i < objects.length; i++) {
    const [digest, offset, length] = objects[i]!
    const object = bytes.subarray(offset, offset + length)
    const actual: Digest = `sha256:${createHash('sha256').update(object).digest('hex')}`
    if (actual !== digest) return { id, failure: { kind: 'digest', message: '', digest, actual } }
    if (length >= 2 && object[0] === 0x7b && object[1] === 0x22) structured.push([i, Uint8Array.prototype.slice.call(object)]) // `{"`: perhaps structured
  }
  held.set(id, { bytes, objects })
  return { id, failure: null, structured }
}

function write({ id, writes }: WriteFrame): WriteReply {
  const frame = held.get(id)
  held.delete(id)
  if (frame === undefined) return { id, failure: null }
  for (const [object, path, mode] of writes) {
    const [, offset, length] = frame.objects[object]!
    const file = typeof path === 'string' ? path : Buffer.from(path.buffer, path.byteOffset, path.byteLength)
    try {
      writeNew(file, mode, frame.bytes.subarray(offset, offset + length))
    } catch (err) {
      const { code, message } = err as NodeJS.ErrnoException
      return { id, failure: { kind: 'write', message, code: code ?? null, path: Buffer.from(path).toString() } satisfies FrameFailure }
    }
  }
  return { id, failure: null }
}

function writeNew(path: string | Buffer, mode: number, bytes: Uint8Array): void {
  const fd = openSync(path, 'wx', mode)
  try {
    for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at)
    fchmodSync(fd, mode) // exactly `mode`, past the umask
  } finally {
    closeSync(fd)
  }
}
