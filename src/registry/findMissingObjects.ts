import type { Digest } from '../store/digest.js'
import type { Store } from '../store/Store.js'
import { forEachLimit } from '../util/forEachLimit.js'
import type { BlobRef } from './Descriptor.js'
import { type BuiltManifest, parseImageIndex, parseSegmentManifest } from './imageManifest.js'
import { readSegment } from './segmentCache.js'
import { type ProgressListener, progressCounter } from './TransferProgress.js'
import type { Transport } from './Transport.js'

/** How many objects a push probes before concluding the remote holds none of the image. */
const COLD_SAMPLE = 16

export interface MissingObjects {
  segments: BuiltManifest[]
  objects: BlobRef[]
}

/**
 * What a push must send. A segment manifest the remote holds vouches for all its
 * objects (the registry checked them when it was pushed), and so does every segment of
 * the image the tag names now, usually the previous version: only objects in neither are
 * checked one by one. When the remote holds nothing of the image (a first push) and a
 * sample of objects confirms it, the per-object checks are skipped: sending a blob the
 * remote already has costs bytes, never correctness.
 */
export async function findMissingObjects({ store, transport, segments, tag, onProgress }: {
  store: Store
  transport: Transport
  segments: BuiltManifest[]
  tag: string
  onProgress?: ProgressListener | undefined
}): Promise<MissingObjects> {
  const missingSegments: BuiltManifest[] = []
  await forEachLimit(segments, 8, async (segment) => {
    if (!(await transport.hasManifest(segment.descriptor.digest))) missingSegments.push(segment)
  })
  const known = await objectsOfTaggedImage(store, transport, tag)
  const candidates = new Map<Digest, BlobRef>()
  for (const segment of missingSegments) {
    for (const o of parseSegmentManifest(segment.bytes, 'segment')) if (known.get(o.digest) !== o.size) candidates.set(o.digest, o)
  }
  const all = [...candidates.values()]
  const nothingThere = missingSegments.length === segments.length && known.size === 0
  if (nothingThere && all.length > COLD_SAMPLE && !(await anyPresent(transport, all))) return { segments: missingSegments, objects: all }
  const progress = progressCounter('checking', all.length, all.reduce((n, o) => n + o.size, 0), onProgress)
  const objects: BlobRef[] = []
  await forEachLimit(all, 32, async (object) => {
    if ((await transport.statBlob(object.digest)) !== object.size) objects.push(object)
    progress.objectDone()
  })
  return { segments: missingSegments, objects }
}

/** Objects listed by the image the tag names now; empty when the tag is new or names something else. */
async function objectsOfTaggedImage(store: Store, transport: Transport, tag: string): Promise<Map<Digest, number>> {
  const known = new Map<Digest, number>()
  const current = await transport.getManifest(tag)
  if (current === null) return known
  try {
    const index = parseImageIndex(current.bytes, `tag ${tag}`)
    await forEachLimit(index.segments, 8, async (segment) => {
      for (const o of parseSegmentManifest((await readSegment(store, transport, segment)).bytes, 'segment')) known.set(o.digest, o.size)
    })
  } catch {
    known.clear() // not a (readable) forkpoint image: nothing to learn from it
  }
  return known
}

async function anyPresent(transport: Transport, objects: BlobRef[]): Promise<boolean> {
  const step = Math.max(1, Math.floor(objects.length / COLD_SAMPLE))
  const sample = objects.filter((_, i) => i % step === 0).slice(0, COLD_SAMPLE)
  let found = false
  await forEachLimit(sample, 16, async (o) => {
    if ((await transport.statBlob(o.digest)) !== null) found = true
  })
  return found
}
