import { InvalidPackError } from '../../errors/index.js'
import type { Frame } from '../../store/PackIndex.js'
import { requirePackage } from '../../util/requirePackage.js'

/**
 * Decompress a run of a pack's frames, given their compressed bytes as they come, each
 * frame no further than its index declares. zstd writes into one buffer of its streaming
 * output size (128 KiB) at a time and every buffer is counted before it is passed on, so
 * a frame that would give more than it declares (a bomb: gigabytes of zeros in a few
 * kilobytes) is refused one buffer past its size, whatever its ratio; so is a frame that
 * gives less, or whose compressed bytes end inside it (exit 5). A frame's compressed bytes
 * are never fed past its end, so each frame is checked alone.
 */
export async function* decompressFrames(compressed: AsyncIterable<Buffer>, frames: readonly Frame[], where: string): AsyncGenerator<Buffer> {
  const { DCtx, dStreamOutSize } = requirePackage('zstd-napi/binding.js') as typeof import('zstd-napi/binding.js')
  const dctx = new DCtx()
  const outSize = dStreamOutSize()
  let n = 0
  let left = frames[0]?.length ?? 0 // compressed bytes of frame n still to come
  let given = 0 // bytes frame n gave so far
  let ended: boolean // zstd finished a frame at its last call
  for await (let chunk of compressed) {
    while (chunk.length > 0) {
      const frame = frames[n]
      if (frame === undefined) throw new InvalidPackError(`${where}: bytes follow the last frame its index declares`)
      let src = chunk.subarray(0, left)
      chunk = chunk.subarray(src.length)
      left -= src.length
      for (;;) {
        const out = Buffer.allocUnsafe(outSize) // a buffer of its own: the reader keeps views into it
        const [ret, produced, consumed] = dctx.decompressStream(out, src)
        src = src.subarray(consumed)
        ended = ret === 0
        if (produced > 0) {
          given += produced
          if (given > frame.size) throw refusal(where, frame, n, `would decompress to more than the ${frame.size} bytes its index declares`)
          yield out.subarray(0, produced)
        }
        if (src.length === 0 && (produced < outSize || ended)) break
      }
      if (left > 0) continue
      if (!ended) throw refusal(where, frame, n, 'ends inside a zstd frame')
      if (given !== frame.size) throw refusal(where, frame, n, `decompresses to ${given} bytes, not the ${frame.size} its index declares`)
      n++
      left = frames[n]?.length ?? 0
      given = 0
    }
  }
  if (n < frames.length) throw new InvalidPackError(`${where} ends inside frame ${n} its index declares (truncated)`)
}

function refusal(where: string, frame: Frame, n: number, what: string): InvalidPackError {
  return new InvalidPackError(`${where}: frame ${n} at ${frame.offset} ${what}: refusing it`, { offset: frame.offset })
}
