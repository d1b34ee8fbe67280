import { DigestMismatchError, InvalidImageError } from '../../errors/index.js'
import { sha256 } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { forEachLimit } from '../../util/forEachLimit.js'
import type { BlobRef } from '../manifest/Descriptor.js'
import { type PackPair, parsePacksManifest } from '../manifest/imageManifest.js'
import { type Limits, frameLimit, raiseHint } from './limits.js'
import { type ReadIndex, parsePackIndex } from '../../store/PackIndex.js'
import { readCapped } from '../transport/readCapped.js'
import { cachedBlob, rememberBlob } from '../cache/registryCache.js'
import type { Transport } from '../transport/Transport.js'

/** A pack of an image with its checked index. */
export interface LoadedPack {
  pair: PackPair
  index: ReadIndex
  /** The index as it came (checked against its digest): what the store keeps beside the pack if it keeps it whole. */
  indexBytes: Buffer
}

/**
 * The packs a packs manifest lists, each with its index read and checked (an index names
 * its pack, which the manifest must list with the same size). Indexes are immutable, so
 * the ones seen before come from the store's `tmp/registry-cache/` and only new ones are
 * fetched; `onFetched` counts their bytes.
 */
export async function loadPacks({
  store,
  transport,
  manifest,
  where,
  limits,
  onFetched,
}: {
  store: Store
  transport: Transport
  manifest: Buffer
  where: string
  limits: Limits
  onFetched?: (bytes: number) => void
}): Promise<LoadedPack[]> {
  const { indexes, packs } = parsePacksManifest(manifest, where)
  const loaded: LoadedPack[] = []
  await forEachLimit(indexes, 8, async (ref) => {
    const bytes = await readPackIndex(store, transport, ref, limits, onFetched)
    const index = parsePackIndex(bytes, `pack index ${ref.digest}`, frameLimit(limits))
    if (packs.get(index.pack) !== index.packSize)
      throw new InvalidImageError(`${where}: pack index ${ref.digest} describes pack ${index.pack} of ${index.packSize} bytes, which the manifest does not list so`, {
        index: ref.digest,
        pack: index.pack,
      })
    loaded.push({ pair: { pack: { digest: index.pack, size: index.packSize }, index: ref }, index, indexBytes: bytes })
  })
  // in the manifest's order, whatever order the indexes arrived in
  const order = new Map(indexes.map((ref, i) => [ref.digest, i]))
  return loaded.sort((a, b) => order.get(a.pair.index.digest)! - order.get(b.pair.index.digest)!)
}

/** A pack index's bytes, verified against its digest: from the cache, else fetched (capped) and cached. */
async function readPackIndex(store: Store, transport: Transport, ref: BlobRef, limits: Limits, onFetched?: (bytes: number) => void): Promise<Buffer> {
  const cached = await cachedBlob(store, ref.digest)
  if (cached) return cached
  if (ref.size > limits.maxPackManifestBytes) {
    throw new InvalidImageError(
      `pack index ${ref.digest} is ${ref.size} bytes, more than the limit of ${limits.maxPackManifestBytes}: refusing it (${raiseHint('maxPackManifestBytes')})`,
      { digest: ref.digest },
    )
  }
  const stream = await transport.openBlob(ref.digest, 0)
  if (stream === null) throw new InvalidImageError(`the image names pack index ${ref.digest}, which ${transport.location} does not have`, { digest: ref.digest })
  const bytes = await readCapped(stream.body, ref.size, `pack index ${ref.digest} from ${transport.location}`)
  const actual = sha256(bytes)
  if (actual !== ref.digest) throw new DigestMismatchError(`pack index ${ref.digest} from ${transport.location} hashes to ${actual}: refusing it`, { digest: ref.digest })
  onFetched?.(bytes.length)
  await rememberPackIndex(store, ref, bytes)
  return bytes
}

/** Keep a pack index we built or verified, so later pushes and pulls need not fetch it. */
export async function rememberPackIndex(store: Store, ref: BlobRef, bytes: Buffer): Promise<void> {
  await rememberBlob(store, ref.digest, bytes)
}
