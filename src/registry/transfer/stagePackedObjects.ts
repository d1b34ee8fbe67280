import type { Digest } from '../../objects/digest.js'
import { objectFromBytes } from '../../store/objectGraph.js'
import type { StructuredObject } from '../../objects/StructuredObject.js'
import type { FilePlace } from '../../world/checkout/ArrivingCheckout.js'
import type { FrameCheckers } from '../pack/FrameCheckers.js'
import type { Store } from '../../store/Store.js'
import { checkDeclaredSizes } from '../pack/checkDeclaredSizes.js'
import type { Limits } from '../pack/limits.js'
import { type PackedObject, type ReadIndex, packIndexBytes, packIndexOf } from '../../store/PackIndex.js'
import { type PackSource, readPackRanges } from '../pack/readPackRanges.js'
import type { Staging } from './Staging.js'
import { type ProgressListener, progressCounter } from '../transport/TransferProgress.js'

/** Told of an image's objects as they arrive, each checked against its digest (the image as a whole is checked later). */
export interface ObjectArrivals {
  /** A structured object, parsed. */
  structured(digest: Digest, object: StructuredObject): void
  /** Blobs of the pack read whole, checked on `threads`, in pack order: the files each fills, which those threads write; [] for none. A promise holds the transfer back until it settles. */
  places(blobs: readonly Digest[]): Promise<Array<readonly FilePlace[]>> | Array<readonly FilePlace[]>
  /** The threads that check the pack read whole and write the files `places` names: the listener waits for their writes (`settle`) and closes them. */
  threads: FrameCheckers
}

/**
 * A pack fetched whole anyway (a wanted object in every frame) with at least this many
 * wanted objects is kept whole by the store, one file instead of one per object: a cold
 * pull then writes each object once, at the checkout. Smaller ones go in as files.
 */
export const KEEP_WHOLE_MIN_OBJECTS = 256

/**
 * Bring every object of these packs that the store lacks (and that is not staged from
 * an earlier, interrupted try) into the staging area: only the frames holding them are
 * read, each object is checked against its digest on the way; the largest pack that
 * qualifies (KEEP_WHOLE_MIN_OBJECTS) is fetched whole and held to be kept whole. Returns
 * the compressed bytes read. Sizes are capped (`checkDeclaredSizes`) before a byte is fetched.
 */
export async function stagePackedObjects({
  store,
  staging,
  packs,
  limits,
  where,
  signal,
  onProgress,
  arrivals,
}: {
  store: Store
  staging: Staging
  /** `indexBytes`: the index as it came, kept beside the pack if it is kept whole (else its canonical bytes are). */
  packs: Array<{ index: ReadIndex; indexBytes?: Buffer; source: PackSource }>
  limits: Limits
  where: string
  signal?: AbortSignal | undefined
  onProgress?: ProgressListener | undefined
  arrivals?: ObjectArrivals | undefined
}): Promise<number> {
  const staged = await staging.staged()
  const owner = new Map<Digest, ReadIndex>()
  for (const { index } of packs) for (const o of index.objects) if (!owner.has(o.digest) && !staged.has(o.digest)) owner.set(o.digest, index)
  const lacking = store.lacking([...owner.keys()])
  const ours = (index: ReadIndex, digest: Digest) => owner.get(digest) === index && lacking.has(digest)
  const wanted = new Map(packs.map(({ index }) => [index, index.objects.filter((o) => ours(index, o.digest))])) // one pass over 100k objects costs tens of ms: one per pack
  const wantedObjects = [...wanted.values()].flat()
  checkDeclaredSizes(wantedObjects, limits, where)
  const frameBytes = packs.reduce((n, { index }) => n + [...framesHolding(wanted.get(index)!)].reduce((m, f) => m + index.frames[f]!.length, 0), 0)
  const progress = progressCounter('receiving', wantedObjects.length, frameBytes, onProgress)
  const whole = packToKeepWhole(packs, wanted)
  let bytes = 0
  for (const { index, indexBytes, source } of wholeLast(packs, whole)) {
    if (index === whole) {
      bytes += await staging.stageWholePack(source, index, indexBytes ?? packIndexBytes(packIndexOf(index)), {
        signal,
        onBytes: (n) => progress.addBytes(n),
        threads: arrivals?.threads,
        onObjects: (arrived) => {
          progress.objectsDone(arrived.filter(({ digest }) => ours(index, digest)).length)
          return arrivals ? tellFrame(arrivals, arrived) : []
        },
      })
      continue
    }
    bytes += await readPackRanges({
      source,
      index,
      wanted: (o) => ours(index, o.digest),
      accept: (o, data) => {
        staging.stageChecked(o.digest, data)
        progress.objectsDone()
        const { object } = objectFromBytes(data, o.digest, { hash: false })
        if (object !== null) arrivals?.structured(o.digest, object)
      },
      signal,
      onBytes: (n) => progress.addBytes(n),
    })
  }
  progress.finish()
  return bytes
}

/**
 * The packs in the order to read them: the one read whole last, so that the structured
 * objects of the others (an incremental image's new trees) are in before its blobs, whose
 * files a clone writes as they come once it has every tree.
 */
function wholeLast<T extends { index: ReadIndex }>(packs: T[], whole: ReadIndex | null): T[] {
  return [...packs.filter((p) => p.index !== whole), ...packs.filter((p) => p.index === whole)]
}

/** Tell the listener of a frame's objects: the structured ones, then the blobs, whose files it answers with (one list for each object). */
async function tellFrame(arrivals: ObjectArrivals, arrived: ReadonlyArray<{ digest: Digest; object: StructuredObject | null }>): Promise<Array<readonly FilePlace[]>> {
  const blobs: Digest[] = []
  for (const { digest, object } of arrived) {
    if (object === null) blobs.push(digest)
    else arrivals.structured(digest, object)
  }
  if (blobs.length === 0) return []
  const places = await arrivals.places(blobs)
  let b = 0
  return arrived.map(({ object }) => (object === null ? (places[b++] ?? []) : []))
}

/** The pack to keep whole, if any: of those fetched whole anyway with enough wanted objects, the one with the most wanted bytes. */
function packToKeepWhole(packs: Array<{ index: ReadIndex }>, wanted: ReadonlyMap<ReadIndex, PackedObject[]>): ReadIndex | null {
  let best: { index: ReadIndex; bytes: number } | null = null
  for (const { index } of packs) {
    const objects = wanted.get(index)!
    const bytes = objects.reduce((n, o) => n + o.size, 0)
    if (objects.length >= KEEP_WHOLE_MIN_OBJECTS && framesHolding(objects).size === index.frames.length && bytes > (best?.bytes ?? -1)) best = { index, bytes }
  }
  return best?.index ?? null
}

/** The frames holding these objects. */
function framesHolding(objects: readonly PackedObject[]): Set<number> {
  return new Set(objects.map((o) => o.frame))
}
