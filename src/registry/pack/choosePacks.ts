import type { Digest } from '../../objects/digest.js'
import type { BlobRef } from '../manifest/Descriptor.js'
import type { LoadedPack } from './loadPacks.js'

/**
 * An image may span at most this many packs. A push that would make it span more
 * repacks: it keeps the one pack holding most of the image's bytes and sends every
 * other object again in its one new pack, so the image spans two.
 */
export const REPACK_THRESHOLD = 16

/**
 * A pack is used only if the image needs at least this share of its bytes: a pull reads
 * every object of the image's packs that the store lacks, so a pack shared with an
 * unrelated image would make it fetch that image too. Below the share, the objects are
 * sent again in the new pack.
 */
const MIN_SHARE = 0.5

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
  const held = heldObjects(known)
  const bytesFrom = new Map<number, number>()
  for (const o of objects) {
    const i = held.get(o.digest)?.pack
    if (i !== undefined) bytesFrom.set(i, (bytesFrom.get(i) ?? 0) + o.size)
  }
  for (const [i, bytes] of bytesFrom) if (bytes < MIN_SHARE * packBytes(known[i]!)) bytesFrom.delete(i)
  const send = objects.filter((o) => !bytesFrom.has(held.get(o.digest)?.pack ?? -1))
  const used = [...bytesFrom.keys()].sort((a, b) => a - b)
  if (used.length + (send.length > 0 ? 1 : 0) <= REPACK_THRESHOLD) return { reuse: used.map((i) => known[i]!), send, repacked: false }
  const keep = used.reduce((best, i) => (bytesFrom.get(i)! > bytesFrom.get(best)! ? i : best))
  const kept = new Set(known[keep]!.index.objects.map((o) => o.digest))
  return { reuse: [known[keep]!], send: objects.filter((o) => !kept.has(o.digest)), repacked: true }
}

/** Each object the remote's packs hold: the first of `known` that holds it. */
function heldObjects(known: LoadedPack[]): Map<Digest, { pack: number }> {
  const held = new Map<Digest, { pack: number }>()
  known.forEach((pack, i) => {
    for (const o of pack.index.objects) if (!held.has(o.digest)) held.set(o.digest, { pack: i })
  })
  return held
}

function packBytes(pack: LoadedPack): number {
  return pack.index.objects.reduce((n, o) => n + o.size, 0)
}
