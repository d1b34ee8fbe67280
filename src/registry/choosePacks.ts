import type { Digest } from '../store/digest.js'
import type { BlobRef } from './Descriptor.js'
import type { LoadedPack } from './loadPacks.js'

/**
 * An image may span at most this many packs. A push that would make it span more
 * repacks: it keeps the one pack holding most of the image's bytes and sends every
 * other object again in its one new pack, so the image spans two.
 */
export const REPACK_THRESHOLD = 16

export interface PackPlan {
  /** Packs on the remote the image uses as they are. */
  reuse: LoadedPack[]
  /** Objects for the one new pack. */
  send: BlobRef[]
  repacked: boolean
}

/** Which of the remote's packs an image can use, and what it must send (everything, with `repack`). */
export function choosePacks({ objects, known, repack }: { objects: BlobRef[]; known: LoadedPack[]; repack: boolean }): PackPlan {
  if (repack) return { reuse: [], send: objects, repacked: true }
  const holder = new Map<Digest, number>()
  known.forEach((pack, i) => {
    for (const o of pack.index.objects) if (!holder.has(o.digest)) holder.set(o.digest, i)
  })
  const bytesFrom = new Map<number, number>()
  const send: BlobRef[] = []
  for (const o of objects) {
    const i = holder.get(o.digest)
    if (i === undefined) send.push(o)
    else bytesFrom.set(i, (bytesFrom.get(i) ?? 0) + o.size)
  }
  const used = [...bytesFrom.keys()].sort((a, b) => a - b)
  if (used.length + (send.length > 0 ? 1 : 0) <= REPACK_THRESHOLD) return { reuse: used.map((i) => known[i]!), send, repacked: false }
  const keep = used.reduce((best, i) => (bytesFrom.get(i)! > bytesFrom.get(best)! ? i : best))
  const kept = new Set(known[keep]!.index.objects.map((o) => o.digest))
  return { reuse: [known[keep]!], send: objects.filter((o) => !kept.has(o.digest)), repacked: true }
}
