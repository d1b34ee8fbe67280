import type { Digest } from '../store/digest.js'
import type { Store } from '../store/Store.js'
import { checkDeclaredSizes } from './checkDeclaredSizes.js'
import type { Limits } from './limits.js'
import type { PackedObject, ReadIndex } from '../store/PackIndex.js'
import { type PackSource, readPackRanges } from './readPackRanges.js'
import type { Staging } from './Staging.js'
import { type ProgressListener, progressCounter } from './TransferProgress.js'

/** Told of an object as it arrives; a promise holds the transfer back until it settles. */
export type ObjectArrival = (digest: Digest, bytes: Buffer) => Promise<void> | void

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
  onArrival,
}: {
  store: Store
  staging: Staging
  packs: Array<{ index: ReadIndex; source: PackSource }>
  limits: Limits
  where: string
  signal?: AbortSignal | undefined
  onProgress?: ProgressListener | undefined
  /** Each object the pull brings, once checked against its digest (before the image as a whole is). */
  onArrival?: ObjectArrival | undefined
}): Promise<number> {
  const staged = await staging.staged()
  const owner = new Map<Digest, ReadIndex>()
  for (const { index } of packs) for (const o of index.objects) if (!owner.has(o.digest) && !staged.has(o.digest)) owner.set(o.digest, index)
  const lacking = store.lacking([...owner.keys()])
  const wanted = (index: ReadIndex) => (o: PackedObject) => owner.get(o.digest) === index && lacking.has(o.digest)
  const wantedObjects = packs.flatMap(({ index }) => index.objects.filter(wanted(index)))
  checkDeclaredSizes(wantedObjects, limits, where)
  const frameBytes = packs.reduce((n, { index }) => n + [...new Set(index.objects.filter(wanted(index)).map((o) => o.frame))].reduce((m, f) => m + index.frames[f]!.length, 0), 0)
  const progress = progressCounter('receiving', wantedObjects.length, frameBytes, onProgress)
  const whole = packToKeepWhole(packs, wanted)
  let bytes = 0
  for (const { index, source } of packs) {
    if (index === whole) {
      bytes += await staging.stageWholePack(source, index, {
        signal,
        onBytes: (n) => progress.addBytes(n),
        onObject: async (digest, data) => {
          if (owner.get(digest) !== index || !lacking.has(digest)) return
          progress.objectDone()
          await onArrival?.(digest, data)
        },
      })
      continue
    }
    bytes += await readPackRanges({
      source,
      index,
      wanted: wanted(index),
      accept: async (o, data) => {
        staging.stageChecked(o.digest, data)
        progress.objectDone()
        await onArrival?.(o.digest, data)
      },
      signal,
      onBytes: (n) => progress.addBytes(n),
    })
  }
  progress.finish()
  return bytes
}

/** The pack to keep whole, if any: of those fetched whole anyway with enough wanted objects, the one with the most wanted bytes. */
function packToKeepWhole(packs: Array<{ index: ReadIndex }>, wanted: (index: ReadIndex) => (o: PackedObject) => boolean): ReadIndex | null {
  let best: { index: ReadIndex; bytes: number } | null = null
  for (const { index } of packs) {
    const objects = index.objects.filter(wanted(index))
    const frames = new Set(objects.map((o) => o.frame))
    const bytes = objects.reduce((n, o) => n + o.size, 0)
    if (objects.length >= KEEP_WHOLE_MIN_OBJECTS && frames.size === index.frames.length && bytes > (best?.bytes ?? -1)) best = { index, bytes }
  }
  return best?.index ?? null
}
