import { createHash } from 'node:crypto'
import { closeSync, openSync, writeSync } from 'node:fs'
import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { type Frame, openFrameQueue } from './frameBuilder.js'
import { type KeptFrame, KeptFrames, keptFrameBytes } from './keptFrames.js'
import type { BlobRef } from '../manifest/Descriptor.js'
import { type PackIndex, packIndexBytes } from '../../store/PackIndex.js'

/** Objects are gathered into frames of about this many bytes before each is compressed. */
const FRAME_BYTES = 1024 * 1024

/**
 * File contents' frames built ahead of their turn (while a push still walks the image)
 * wait, compressed, until the pack is written after its structured objects: at most
 * this many bytes of contents are lent ahead, and the rest is built in its turn.
 */
const AHEAD_BYTES = 64 * 1024 * 1024

export interface WrittenPack {
  digest: Digest
  size: number
  index: PackIndex
  /** The index's canonical bytes (what travels as the index blob). */
  indexBytes: Buffer
  /** The threads that built it, how many of its frames the second one built, and how many were taken as the store's packs hold them. */
  threads: 1 | 2
  helperFrames: number
  keptFrames: number
}

/**
 * A pack being made: file contents added one by one, in pack order, as they become known
 * (a push adds them as its walk meets them, and the second thread compresses their frames
 * meanwhile); then `finish` writes the structured objects first, then the contents.
 */
export interface PackWriter {
  /** Add a file's content (any object that is not structured); when it answers a promise, await it before adding more (the threads' replies come in meanwhile). */
  addContent(object: BlobRef): Promise<void> | undefined
  /** Write the pack at `file`: `structured` (snapshots, trees and the like) in digest order, then the contents added. */
  finish(file: string, structured: BlobRef[], options?: { onBytes?: ((n: number) => void) | undefined }): Promise<WrittenPack>
  /** Stop its second thread; call it however the pack ended. */
  close(): Promise<void>
}

/** A frame of the pack to come: its objects, the second thread's build of it if lent ahead, or the store's frame that holds them. */
interface PendingFrame {
  objects: BlobRef[]
  ahead: Promise<Frame | null> | null
  kept?: KeptFrame
}

/** How a pack is compressed: zstd's `level`, and whether frames the store's packs hold whole are taken as they are (`keep`). */
export interface PackOptions {
  level?: number
  keep?: boolean
}

/**
 * A pack's objects, read from the store and each verified as it is read, gathered into
 * zstd frames of about FRAME_BYTES (an object larger than that gets a frame of its own),
 * each frame with its checksum: the structured objects first, in digest order (a checkout
 * reads every tree before any file, so together they fill a frame or a few, not one frame
 * per tree), then the file contents in the order added (an image's walk meets a
 * directory's files together: a checkout, which writes in pack order, then creates one
 * directory's files after another). With `keep`, file contents, or structured objects,
 * that fill a frame of the store's packs go as that frame, in its order, checked and not
 * compressed again (KeptFrames). The same objects in the same order, level and store
 * always give the same bytes, so an interrupted push, walking the same image again, finds
 * the pack it sent already there.
 */
export function openPackWriter(store: Store, { level = 3, keep = false }: PackOptions = {}): PackWriter {
  const building = openFrameQueue({
    level,
    reader: { read: (o) => store.readSizedSync(o.digest, o.size), where: (o) => store.objectPath(o.digest) },
    storeDirs: { objectsDir: store.objectsDir, packsDir: store.packs.dir },
  })
  const contents: PendingFrame[] = []
  const kept = keep ? new KeptFrames(store.packs) : null
  const grouping = new FrameGrouping()
  let aheadBytes = 0
  let waiting = 0 // the first content frame not yet lent ahead
  /** Lend the second thread the content frames waiting, in order, while it has room. */
  const lendWaiting = () => {
    for (; waiting < contents.length; waiting++) {
      const frame = contents[waiting]!
      if (frame.kept) continue
      const bytes = frame.objects.reduce((n, o) => n + o.size, 0)
      if (aheadBytes + bytes > AHEAD_BYTES) return
      frame.ahead = building.lend(frame.objects)
      if (!frame.ahead) return
      aheadBytes += bytes
    }
  }
  /** Add a content to the frames built here; answers the frame it closed, if it closed one. */
  const group = (object: BlobRef): BlobRef[] | null => {
    building.grow(1, object.size)
    const closed = grouping.add(object)
    if (closed) contents.push({ objects: closed, ahead: null })
    return closed
  }
  let keptFrames = 0
  return {
    addContent(object) {
      const taken = kept?.add(object) ?? null
      if (taken === 'held') return undefined
      if (taken !== null) {
        contents.push({ objects: taken.objects, ahead: null, kept: taken })
        return undefined
      }
      if (!group(object)) return undefined
      if (building.threads === 1) return undefined
      lendWaiting()
      // the helper's replies come in through the event loop, and make room for the next frames
      return new Promise((resolve) => setImmediate(() => resolve(lendWaiting())))
    },
    async finish(file, structured, { onBytes } = {}) {
      for (const object of kept?.rest() ?? []) group(object)
      const last = grouping.rest()
      if (last) contents.push({ objects: last, ahead: null })
      // the contents held were given back (rest): a frame holding both kinds cannot complete now either
      const { taken, rest } = kept ? takeKept(kept, structured) : { taken: [], rest: structured }
      const sorted = [...rest].sort((a, b) => (a.digest < b.digest ? -1 : a.digest > b.digest ? 1 : 0))
      building.grow(
        sorted.length,
        sorted.reduce((n, o) => n + o.size, 0),
      )
      // the writer keeps no frame once written
      const frames: PendingFrame[] = [...taken, ...frameGroups(sorted).map((objects) => ({ objects, ahead: null })), ...contents.splice(0)]
      const entries: Array<[Digest, number, number]> = []
      let offset = 0
      for (const { objects } of frames) {
        for (const o of objects) {
          entries.push([o.digest, offset, o.size])
          offset += o.size
        }
      }
      const hash = createHash('sha256')
      const frameSizes: Array<[number, number]> = []
      let size = 0
      const fd = openSync(file, 'w', 0o600)
      const write = (built: Frame[]) => {
        for (const { bytes, rawSize } of built) {
          writeSync(fd, bytes)
          hash.update(bytes)
          frameSizes.push([bytes.length, rawSize])
          size += bytes.length
          onBytes?.(rawSize)
        }
      }
      try {
        for (const frame of frames) {
          const taken = frame.kept && keptFrameBytes(store.packs, frame.kept)
          if (taken) keptFrames++
          write(await (taken ? building.addBuilt(taken) : building.add(frame.objects, frame.ahead)))
        }
        write(await building.finish())
      } finally {
        closeSync(fd)
        await building.close() // its second thread is not needed while the pack goes up
      }
      const digest: Digest = `sha256:${hash.digest('hex')}`
      const index: PackIndex = { kind: 'pack-index', schemaVersion: 1, pack: digest, packSize: size, frames: frameSizes, objects: entries }
      return { digest, size, index, indexBytes: packIndexBytes(index), threads: building.threads, helperFrames: building.helperFrames, keptFrames }
    },
    close: () => building.close(),
  }
}

/** Write `objects` as a pack at `file` in one go (`openPackWriter`): `structured` names those written first. */
export async function writePack(
  store: Store,
  objects: BlobRef[],
  file: string,
  { onBytes, structured = new Set(), ...options }: PackOptions & { onBytes?: ((n: number) => void) | undefined; structured?: ReadonlySet<Digest> } = {},
): Promise<WrittenPack> {
  const pack = openPackWriter(store, options)
  try {
    for (const o of objects) {
      if (structured.has(o.digest)) continue
      const turn = pack.addContent(o)
      if (turn) await turn
    }
    return await pack.finish(
      file,
      objects.filter((o) => structured.has(o.digest)),
      { onBytes },
    )
  } finally {
    await pack.close()
  }
}

/** The frames of the store's packs that hold nothing but some of `objects`, and the objects no such frame holds. */
function takeKept(kept: KeptFrames, objects: BlobRef[]): { taken: PendingFrame[]; rest: BlobRef[] } {
  const taken: PendingFrame[] = []
  const rest: BlobRef[] = []
  for (const object of objects) {
    const frame = kept.add(object)
    if (frame === null) rest.push(object)
    else if (frame !== 'held') taken.push({ objects: frame.objects, ahead: null, kept: frame })
  }
  return { taken, rest: [...rest, ...kept.rest()] }
}

/** Gathers objects, in order, into frames of about FRAME_BYTES (an object larger than that gets a frame of its own). */
class FrameGrouping {
  private group: BlobRef[] = []
  private bytes = 0

  /** Add the next object; answers the frame this closed, if it closed one. */
  add(object: BlobRef): BlobRef[] | null {
    let closed: BlobRef[] | null = null
    if (this.bytes > 0 && this.bytes + object.size > FRAME_BYTES) {
      closed = this.group
      ;[this.group, this.bytes] = [[], 0]
    }
    this.group.push(object)
    this.bytes += object.size
    return closed
  }

  /** The frame still open, if it holds anything. */
  rest(): BlobRef[] | null {
    return this.group.length > 0 ? this.group : null
  }
}

/** The objects in frames, in order (FrameGrouping). */
function frameGroups(objects: BlobRef[]): BlobRef[][] {
  const grouping = new FrameGrouping()
  const groups: BlobRef[][] = []
  for (const object of objects) {
    const closed = grouping.add(object)
    if (closed) groups.push(closed)
  }
  const last = grouping.rest()
  return last ? [...groups, last] : groups
}
