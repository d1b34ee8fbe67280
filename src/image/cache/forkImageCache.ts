import { UsageError } from '../../errors/index.js'
import { type Digest, shortId } from '../../objects/digest.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import { resolveId } from '../../store/resolveId.js'
import { readSnapshot } from '../../world/tree/readObjects.js'
import { addForkChildren } from '../addForkChildren.js'
import { inheritElsewhere } from '../../world/checkout/cameFromElsewhere.js'
import type { Snapshot } from '../../objects/Snapshot.js'
import { type ForkSequenceArgs, type ForkSequenceResult, forkSequence } from './forkSequence.js'
import { modelSha256 } from './kvCacheLayer.js'
import { loadLlama } from './loadLlama.js'

export interface ForkImageCacheArgs extends StoreLocator, Pick<ForkSequenceArgs<number>, 'k' | 'vary' | 'maxTokens' | 'scorer' | 'threads'> {
  /** The image whose cache layer to fork from. */
  id: string
  /** The GGUF file of the model the cache was made with. */
  modelPath: string
  now?: () => Date
}

export interface ForkImageCacheResult extends ForkSequenceResult {
  /** The image forked from. */
  from: Digest
  /** With a scorer: a new image, child of `from`, whose cache layer is the best continuation's state. */
  image?: Digest
  /** The ref that keeps `image`: `refs/forks/<short id of from>/<index>`, numbered with the children `fork` makes. */
  ref?: string
}

/**
 * `forkSequence` over an image's cache layer (`forkpoint llm fork`): K continuations from
 * its state, and with a scorer a new image holding the best one's, so a search can go on
 * from it as from any image. That image is kept as the next of `from`'s fork children
 * (`refs/forks/<short id>/<index>`), so gc keeps it and `log --all` shows it.
 * @throws {UsageError} when the image has no cache layer, or node-llama-cpp is missing
 */
export async function forkImageCache(args: ForkImageCacheArgs): Promise<ForkImageCacheResult> {
  const { store } = await openStore(args)
  const from = await resolveId(store, args.id)
  const snapshot = await readSnapshot(store, from)
  if (snapshot.cache === undefined) throw new UsageError(`image ${shortId(from)} has no cache layer to fork from`, { id: from })
  await modelSha256(args.modelPath) // a missing model file: InputNotFoundError before llama.cpp starts
  const llama = await loadLlama(args.modelPath)
  try {
    const result = await forkSequence({ ...args, store, id: snapshot.cache, model: llama.model })
    if (!result.best) return { ...result, from }
    const best = result.best
    const createdAt = (args.now ?? (() => new Date()))().toISOString()
    const [named] = await addForkChildren(store, from, 1, async (index) => {
      const child = await store.writeObject({
        ...snapshot,
        parents: [from],
        cache: best.id,
        meta: { ...snapshot.meta, message: `llm fork: child ${best.index} of ${args.k}`, createdAt, fork: { of: from, index } },
      } satisfies Snapshot)
      await inheritElsewhere(store, from, child)
      return child
    })
    return { ...result, from, image: named!.id, ref: named!.ref }
  } finally {
    await llama.dispose()
  }
}
