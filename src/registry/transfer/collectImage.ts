import { StoreCorruptError, UsageError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import { walkGraph } from '../../store/objectGraph.js'
import type { Store } from '../../store/Store.js'
import type { Snapshot } from '../../objects/Snapshot.js'
import type { BlobRef } from '../manifest/Descriptor.js'
import type { DigestSet } from './DigestSet.js'

/**
 * Every object of the image rooted at `root`, with its size; refuses an incomplete local
 * image. File contents are sized by their trees and not looked for: the pack writer reads
 * and checks each one it sends, and refuses a missing one (exit 5). With
 * `depth`, only the root and its ancestors up to `depth` snapshots deep (`depth` 1: the
 * root alone); `shallow` names the snapshots whose parents were left out, `structured`
 * the objects that are not file contents. With `known` (an image the remote holds), only
 * what lies beyond it, and `reachedKnown` says where the walk met it. `onContent` is told of
 * each object that is not structured as the walk reaches it (`walkGraph`).
 */
export async function collectImage(
  store: Store,
  root: Digest,
  {
    depth = Infinity,
    known,
    onContent,
  }: { depth?: number | undefined; known?: DigestSet; onContent?: ((digest: Digest, size: number) => Promise<void> | undefined) | undefined } = {},
): Promise<{ objects: BlobRef[]; shallow: Digest[]; structured: Set<Digest>; reachedKnown: Set<Digest> }> {
  if (depth !== Infinity && (!Number.isSafeInteger(depth) || depth < 1)) throw new UsageError(`depth must be a whole number of snapshots, 1 or more, not ${depth}`, { depth })
  const cutAt = Number.isFinite(depth) ? await snapshotsAtDepth(store, root, depth) : new Set<Digest>()
  const { reachable, missing, structured, reachedKnown } = await walkGraph(store, [root], { cutAt, sizesFromTrees: true, known, onContent })
  if (missing.size > 0) {
    const [digest, from] = missing.entries().next().value as [Digest, Digest | 'root']
    throw new StoreCorruptError(`cannot send ${root}: object ${digest} (named by ${from}) is missing from the store; run 'forkpoint verify'`, {
      root,
      missing: [...missing.keys()].slice(0, 20),
    })
  }
  return { objects: [...reachable].map(([digest, size]) => ({ digest, size })), shallow: [...cutAt], structured, reachedKnown }
}

/** The snapshots `depth` parents from the root (by the shortest path) that have parents: where a shallow image is cut. */
async function snapshotsAtDepth(store: Store, root: Digest, depth: number): Promise<Set<Digest>> {
  const cut = new Set<Digest>()
  const seen = new Set<Digest>([root])
  let level: Digest[] = [root]
  for (let d = 1; level.length > 0; d++) {
    const next: Digest[] = []
    for (const id of level) {
      const { parents } = await store.readObject<Snapshot>(id, 'snapshot')
      const unseen = parents.filter((p) => !seen.has(p))
      if (d >= depth) {
        if (parents.length > 0) cut.add(id)
        continue
      }
      for (const p of unseen) seen.add(p)
      next.push(...unseen)
    }
    level = next
  }
  return cut
}
