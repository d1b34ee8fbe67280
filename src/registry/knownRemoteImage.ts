import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { type Digest, digestHex, sha256 } from '../store/digest.js'
import type { Store } from '../store/Store.js'
import { atomicWrite } from '../util/atomicWrite.js'
import { readOrNull } from '../util/fsx.js'
import { DigestSet } from './DigestSet.js'

/**
 * What this store last pushed to a remote tag: the tagged index's digest, and every
 * object of that image with their total size. While the tag still names that index, the
 * next push of a descendant walks only what is new (it stops at objects of this set)
 * and reuses the image's packs without reading their indexes.
 */
export interface KnownRemoteImage {
  index: Digest
  bytes: number
  objects: DigestSet
}

/**
 * One file per remote tag in the store's `tmp/registry-cache/` (gc expires it with the
 * rest of tmp/): the index digest (32 bytes), the total size (u64 LE), the sorted
 * digests, and a sha256 of all that, so a damaged file reads as none.
 */
function recordPath(store: Store, location: string, tag: string): string {
  return store.path('tmp', 'registry-cache', `pushed-${digestHex(sha256(`${location}\0${tag}`)).slice(0, 32)}`)
}

const HASH = 32
const HEADER = 32 + 8

export async function readKnownRemoteImage(store: Store, location: string, tag: string): Promise<KnownRemoteImage | null> {
  const file = await readOrNull(recordPath(store, location, tag))
  if (file === null || file.length < HEADER + HASH) return null
  const body = file.subarray(0, file.length - HASH)
  if (sha256(body) !== `sha256:${file.subarray(file.length - HASH).toString('hex')}`) return null
  const objects = DigestSet.fromSorted(body.subarray(HEADER))
  if (objects === null) return null
  return { index: `sha256:${body.subarray(0, 32).toString('hex')}`, bytes: Number(body.readBigUInt64LE(32)), objects }
}

export async function rememberRemoteImage(store: Store, location: string, tag: string, image: KnownRemoteImage): Promise<void> {
  const header = Buffer.alloc(HEADER)
  header.write(digestHex(image.index), 0, 'hex')
  header.writeBigUInt64LE(BigInt(image.bytes), 32)
  const body = Buffer.concat([header, image.objects.buffer])
  const path = recordPath(store, location, tag)
  await fs.mkdir(join(path, '..'), { recursive: true })
  await atomicWrite(path, Buffer.concat([body, Buffer.from(digestHex(sha256(body)), 'hex')]))
}
