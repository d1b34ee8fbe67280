import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { DigestMismatchError, InvalidImageError } from '../errors/index.js'
import { digestHex, sha256 } from '../store/digest.js'
import type { Store } from '../store/Store.js'
import { atomicWrite } from '../util/atomicWrite.js'
import { readOrNull } from '../util/fsx.js'
import type { Descriptor } from './Descriptor.js'
import type { BuiltManifest } from './imageManifest.js'
import type { Transport } from './Transport.js'

/**
 * A segment manifest's bytes, verified against its digest. Segments are immutable, so
 * the ones seen before are kept in the store's `tmp/registry-cache/` (which gc expires
 * with the rest of tmp/) and an incremental pull fetches only the new ones.
 */
export async function readSegment(store: Store, transport: Transport, segment: Descriptor): Promise<{ bytes: Buffer; fetched: boolean }> {
  const cached = await readOrNull(join(store.path('tmp', 'registry-cache'), digestHex(segment.digest)))
  if (cached && sha256(cached) === segment.digest) return { bytes: cached, fetched: false }
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
  const cacheDir = store.path('tmp', 'registry-cache')
  await fs.mkdir(cacheDir, { recursive: true })
  await atomicWrite(join(cacheDir, digestHex(descriptor.digest)), bytes)
}
