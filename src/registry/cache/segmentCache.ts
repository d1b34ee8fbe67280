import { DigestMismatchError, InvalidImageError } from '../../errors/index.js'
import { sha256 } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import type { Descriptor } from '../manifest/Descriptor.js'
import { cachedBlob, rememberBlob } from './registryCache.js'
import type { BuiltManifest } from '../manifest/imageManifest.js'
import type { Transport } from '../transport/Transport.js'

/**
 * A segment manifest's bytes, verified against its digest. Segments are immutable, so
 * the ones seen before are kept in the registry cache and an incremental pull fetches
 * only the new ones.
 */
export async function readSegment(store: Store, transport: Transport, segment: Descriptor): Promise<{ bytes: Buffer; fetched: boolean }> {
  const cached = await cachedBlob(store, segment.digest)
  if (cached) return { bytes: cached, fetched: false }
  const fetched = await transport.getManifest(segment.digest)
  if (fetched === null) throw new InvalidImageError(`the image names segment ${segment.digest}, which ${transport.location} does not have`, { digest: segment.digest })
  if (sha256(fetched.bytes) !== segment.digest) {
    throw new DigestMismatchError(`segment ${segment.digest} from ${transport.location} hashes to ${sha256(fetched.bytes)}: refusing it`, { digest: segment.digest })
  }
  await rememberSegment(store, { descriptor: segment, bytes: fetched.bytes })
  return { bytes: fetched.bytes, fetched: true }
}

/** Keep a segment manifest we built or verified, so later pushes and pulls need not fetch it. */
export async function rememberSegment(store: Store, { descriptor, bytes }: BuiltManifest): Promise<void> {
  await rememberBlob(store, descriptor.digest, bytes)
}
