import type { Digest } from '../store/digest.js'
import type { Store } from '../store/Store.js'
import { forEachLimit } from '../util/forEachLimit.js'
import { checkDeclaredSizes } from './checkDeclaredSizes.js'
import type { Limits } from './limits.js'
import type { PackedObject, ReadIndex } from './PackIndex.js'
import { type PackSource, readPackRanges } from './readPackRanges.js'
import type { Staging } from './Staging.js'
import { type ProgressListener, progressCounter } from './TransferProgress.js'

/**
 * Bring every object of these packs that the store lacks (and that is not staged from
 * an earlier, interrupted try) into the staging area: only the frames holding them are
 * read, each object is checked against its digest on the way. Returns the compressed
 * bytes read. Sizes are capped (`checkDeclaredSizes`) before a byte is fetched.
 */
export async function stagePackedObjects({
  store,
  staging,
  packs,
  limits,
  where,
  signal,
  onProgress,
}: {
  store: Store
  staging: Staging
  packs: Array<{ index: ReadIndex; source: PackSource }>
  limits: Limits
  where: string
  signal?: AbortSignal | undefined
  onProgress?: ProgressListener | undefined
}): Promise<number> {
  const staged = await staging.staged()
  const owner = new Map<Digest, ReadIndex>()
  for (const { index } of packs) for (const o of index.objects) if (!owner.has(o.digest) && !staged.has(o.digest)) owner.set(o.digest, index)
  const lacking = new Set<Digest>()
  await forEachLimit([...owner.keys()], 64, async (digest) => {
    if (!(await store.has(digest))) lacking.add(digest)
  })
  const wanted = (index: ReadIndex) => (o: PackedObject) => owner.get(o.digest) === index && lacking.has(o.digest)
  const wantedObjects = packs.flatMap(({ index }) => index.objects.filter(wanted(index)))
  checkDeclaredSizes(wantedObjects, limits, where)
  const frameBytes = packs.reduce((n, { index }) => n + [...new Set(index.objects.filter(wanted(index)).map((o) => o.frame))].reduce((m, f) => m + index.frames[f]!.length, 0), 0)
  const progress = progressCounter('receiving', wantedObjects.length, frameBytes, onProgress)
  let bytes = 0
  for (const { index, source } of packs) {
    bytes += await readPackRanges({
      source,
      index,
      wanted: wanted(index),
      accept: (o, data) => {
        staging.stageChecked(o.digest, data)
        progress.objectDone()
      },
      signal,
      onBytes: (n) => progress.addBytes(n),
    })
  }
  progress.finish()
  return bytes
}
