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
 * A new pack's file contents gathered by the frame of the store's packs that holds each
 * one (a cold snapshot's pack, a pull's): once every object of such a frame has come, the
 * frame is taken whole, its compressed bytes sent as they are rather than compressed
 * again, as git reuses the objects its packs hold compressed. A frame that also holds
 * objects the new pack does not take (trees, which are packed first, or another image's
 * files) never completes, and its objects are built anew (`rest`).
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

/**
 * A kept frame's compressed bytes, checked as a frame built anew would be: one zstd frame
 * and nothing after it (no skippable frame carrying other bytes along), decompressing to
 * exactly its objects, one after another, each matching its digest. Null when any of that
 * fails: the frame is then built from its objects, where what is wrong is reported.
 */
export function keptFrameBytes(packs: LocalPacks, { pack, frame, objects }: KeptFrame): Frame | null {
  let read: { compressed: Buffer; bytes: Buffer }
  try {
    read = packs.readFrame(pack, frame)
    const { findFrameCompressedSize } = requirePackage('zstd-napi/binding.js') as typeof import('zstd-napi/binding.js')
    if (findFrameCompressedSize(read.compressed) !== read.compressed.length) return null
  } catch {
    return null
  }
  const start = pack.index.frames[frame]!.start
  let at = 0
  for (const object of objects) {
    if (object.offset - start !== at || sha256(read.bytes.subarray(at, at + object.size)) !== object.digest) return null
    at += object.size
  }
  return at === read.bytes.length ? { bytes: read.compressed, rawSize: at } : null
}
