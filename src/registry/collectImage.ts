import { promises as fs } from 'node:fs'
import { StoreCorruptError } from '../errors/index.js'
import type { Digest } from '../store/digest.js'
import { walkGraph } from '../store/objectGraph.js'
import type { Store } from '../store/Store.js'
import { forEachLimit } from '../util/forEachLimit.js'
import type { BlobRef } from './Descriptor.js'

/** Every object of the image rooted at `root`, with its size; refuses an incomplete local image. */
export async function collectImage(store: Store, root: Digest): Promise<BlobRef[]> {
  const { reachable, missing } = await walkGraph(store, [root])
  if (missing.size > 0) {
    const [digest, from] = missing.entries().next().value as [Digest, Digest | 'root']
    throw new StoreCorruptError(`cannot send ${root}: object ${digest} (named by ${from}) is missing from the store; run 'forkpoint verify'`, {
      root,
      missing: [...missing.keys()].slice(0, 20),
    })
  }
  const objects: BlobRef[] = []
  await forEachLimit([...reachable], 32, async (digest) => {
    objects.push({ digest, size: (await fs.stat(store.objectPath(digest))).size })
  })
  return objects
}
