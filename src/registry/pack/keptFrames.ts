import { sha256 } from '../../objects/digest.js'
import type { LocalPack, LocalPacks } from '../../store/LocalPacks.js'
import type { PackedObject } from '../../store/PackIndex.js'
import { requirePackage } from '../../util/requirePackage.js'
import type { BlobRef } from '../manifest/Descriptor.js'
import type { Frame } from './frameBuilder.js'

/** A frame of one of the store's packs that holds nothing but objects a new pack takes: it goes into that pack as it is. */
export interface KeptFrame {
  pack: LocalPack
  frame: number
  /** Its objects, in the frame's order. */
  objects: PackedObject[]
}

/**
 * A new pack's objects of one kind (its file contents, or its structured objects)
 * gathered by the frame of the store's packs that holds each one (a cold snapshot's pack,
 * a pull's): once every object of such a frame has come, the frame is taken whole, its
 * compressed bytes sent as they are rather than compressed again, as git reuses the
 * objects its packs hold compressed. A frame that also holds objects not given here (of
 * the other kind, or another image's) never completes, and its objects are built anew
 * (`rest`).
 */
export class KeptFrames {
  private readonly waiting = new Map<LocalPack, Map<number, PackedObject[]>>()
  private readonly objectsPerFrame = new Map<LocalPack, Uint32Array>()

  constructor(private readonly packs: LocalPacks) {}

  /**
   * Count `object` toward the frame that holds it: answers that frame once all of its
   * objects came, `held` while it waits for others, null when no frame of the store's
   * packs holds it (it is built). Looks only in the indexes read already: a push's walk
   * read them when it met the first packed tree.
   */
  add(object: BlobRef): KeptFrame | 'held' | null {
    const at = this.packs.locate(object.digest, 'read-already')
    if (at === undefined || at.object.size !== object.size) return null
    const frames = this.waiting.get(at.pack) ?? this.waiting.set(at.pack, new Map()).get(at.pack)!
    const held = frames.get(at.object.frame) ?? []
    held.push(at.object)
    if (held.length < this.objectsIn(at.pack)[at.object.frame]!) {
      frames.set(at.object.frame, held)
      return 'held'
    }
    frames.delete(at.object.frame)
    return { pack: at.pack, frame: at.object.frame, objects: held.sort((a, b) => a.offset - b.offset) }
  }

  /** The objects held for frames that not all of theirs came to, frame by frame. */
  rest(): BlobRef[] {
    const rest = [...this.waiting.values()].flatMap((frames) => [...frames.values()].flat())
    this.waiting.clear()
    return rest.map(({ digest, size }) => ({ digest, size }))
  }

  private objectsIn(pack: LocalPack): Uint32Array {
    let counts = this.objectsPerFrame.get(pack)
    if (counts === undefined) {
      counts = new Uint32Array(pack.index.frames.length)
      for (const object of pack.index.objects) counts[object.frame]!++
      this.objectsPerFrame.set(pack, counts)
    }
    return counts
  }
}

/** The first four bytes of a zstd frame (a skippable frame has others). */
const ZSTD_MAGIC = 0xfd2fb528

/**
 * A kept frame's compressed bytes, checked as strictly as a frame built anew: by the
 * index first, its objects one after another from the frame's start and filling it, in no
 * more compressed bytes than zstd can need for them; then one zstd frame as a pack writer
 * makes it (no dictionary, its content size and checksum declared) and nothing after it
 * (a skippable frame would carry other bytes along), which decodes as a pull decodes it
 * (streaming, within the same window limit) to exactly its objects, each matching its
 * digest. Null when any of that fails: the frame is then built from its objects, where
 * what is wrong is reported.
 */
export function keptFrameBytes(packs: LocalPacks, { pack, frame, objects }: KeptFrame): Frame | null {
  const { start, size, length } = pack.index.frames[frame]!
  let end = start
  for (const object of objects) {
    if (object.offset !== end) return null
    end += object.size
  }
  const zstd = requirePackage('zstd-napi/binding.js') as typeof import('zstd-napi/binding.js')
  if (end - start !== size || size === 0 || length > zstd.compressBound(size)) return null
  let compressed: Buffer
  try {
    compressed = packs.readCompressed(pack, frame)
  } catch {
    return null
  }
  const bytes = decodedAsPulled(zstd, compressed, size)
  if (bytes === null) return null
  for (const object of objects) {
    const at = object.offset - start
    if (sha256(bytes.subarray(at, at + object.size)) !== object.digest) return null
  }
  return { bytes: compressed, rawSize: size }
}

/**
 * `compressed` decoded by a streaming context, as `decompressFrames` decodes a pull's
 * frames (the same window limit), when it is one such frame of exactly `size` bytes; else
 * null. Into one buffer of the frame's size rather than through `decompressFrames`' 128 KiB
 * buffers: those cost a push of 10k files 55 ms more (77 frames).
 */
function decodedAsPulled(zstd: typeof import('zstd-napi/binding.js'), compressed: Buffer, size: number): Buffer | null {
  try {
    if (compressed.length < 5 || compressed.readUInt32LE(0) !== ZSTD_MAGIC) return null
    const descriptor = compressed[4]!
    const checksum = (descriptor & 0x04) !== 0
    const dictionary = (descriptor & 0x03) !== 0
    if (!checksum || dictionary) return null
    if (zstd.getFrameContentSize(compressed) !== size || zstd.findFrameCompressedSize(compressed) !== compressed.length) return null
    const dctx = new zstd.DCtx()
    const out = Buffer.allocUnsafe(size)
    let produced = 0
    let src = compressed
    for (;;) {
      const [ret, n, consumed] = dctx.decompressStream(out.subarray(produced), src)
      produced += n
      src = src.subarray(consumed)
      if (ret === 0) return produced === size && src.length === 0 ? out : null
      if (n === 0 && consumed === 0) return null // the output is full, or the input ends inside the frame
    }
  } catch {
    return null // zstd refused it (a window past the limit, a damaged block, a checksum that does not match)
  }
}
