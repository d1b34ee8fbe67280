import { type Digest, digestHex, sha256 } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { readStateOrNull } from '../../store/readStateFile.js'
import { collectImage } from './collectImage.js'
import type { BlobRef } from '../manifest/Descriptor.js'
import { DigestSet } from './DigestSet.js'
import { cachePath, writeCached } from '../cache/registryCache.js'

/**
 * What this store last pushed to, or pulled from, a remote tag: the tagged index's
 * digest, the image's root, and every object of that image with their total size. While
 * the tag still names that index, the next push of a descendant walks only what is new
 * (it stops at objects of this set) and reuses the image's packs without reading their
 * indexes.
 */
export interface KnownRemoteImage {
  index: Digest
  root: Digest
  bytes: number
  objects: DigestSet
}

/**
 * One file per remote tag in the store's `tmp/registry-cache/` (gc expires it with the
 * rest of tmp/): the index digest and the root (32 bytes each), the total size (u64 LE),
 * the sorted digests, and a sha256 of all that, so a damaged file reads as none.
 */
function recordName(location: string, tag: string): string {
  return `known-${digestHex(sha256(`${location}\0${tag}`)).slice(0, 32)}`
}

const HASH = 32
const HEADER = 32 + 32 + 8

const digestAt = (bytes: Buffer, at: number): Digest => `sha256:${bytes.subarray(at, at + 32).toString('hex')}`

export async function readKnownRemoteImage(store: Store, location: string, tag: string): Promise<KnownRemoteImage | null> {
  const file = readStateOrNull(cachePath(store, recordName(location, tag)))
  if (file === null || file.length < HEADER + HASH) return null
  const body = file.subarray(0, file.length - HASH)
  if (sha256(body) !== digestAt(file, file.length - HASH)) return null
  const objects = DigestSet.fromSorted(body.subarray(HEADER))
  if (objects === null) return null
  return { index: digestAt(body, 0), root: digestAt(body, 32), bytes: Number(body.readBigUInt64LE(64)), objects }
}

export async function rememberRemoteImage(store: Store, location: string, tag: string, image: KnownRemoteImage): Promise<void> {
  const header = Buffer.alloc(HEADER)
  header.write(digestHex(image.index), 0, 'hex')
  header.write(digestHex(image.root), 32, 'hex')
  header.writeBigUInt64LE(BigInt(image.bytes), 64)
  const body = Buffer.concat([header, image.objects.buffer])
  await writeCached(store, recordName(location, tag), Buffer.concat([body, Buffer.from(digestHex(sha256(body)), 'hex')]))
}

/** An image seen as a known one plus what lies beyond it. */
export interface ExtendedImage {
  /** The walk beyond the known image: what a push of it sends. */
  beyond: Awaited<ReturnType<typeof collectImage>>
  objects: number
  bytes: number
  members: DigestSet
}

/**
 * The image at `root` as `known` plus the objects beyond it, or null unless the walk
 * from `root` meets the known image's root: only then is all of the known image part of
 * this one, and the counts exact.
 */
export async function extendKnownImage(store: Store, root: Digest, known: KnownRemoteImage): Promise<ExtendedImage | null> {
  const beyond = await collectImage(store, root, { known: known.objects })
  if (!beyond.reachedKnown.has(known.root)) return null
  return {
    beyond,
    objects: known.objects.size + beyond.objects.length,
    bytes: beyond.objects.reduce((n, o) => n + o.size, known.bytes),
    members: known.objects.with(beyond.objects.map((o) => o.digest)),
  }
}

/**
 * Remember the image a pull just brought in whole (not shallow) from a remote tag, so
 * that a push from this store (a clone's first) continues it. `checked` is the image as
 * the pull's check walked it, when every object of it came from the remote (a clone): it
 * is recorded as it is. Otherwise the objects are walked, from the tag's previous record
 * when that image is an ancestor (an incremental pull walks what it brought), else in
 * full, and `held` (the objects the image's packs hold) must hold them all: the pull
 * accepts an object the store had already, and if the remote lacks one, recording the
 * image would have a push never send it.
 */
export async function rememberPulledImage(
  store: Store,
  location: string,
  tag: string,
  { index, root, checked, held }: { index: Digest; root: Digest; checked?: BlobRef[] | null; held: (digest: Digest) => boolean },
): Promise<void> {
  const record = (objects: BlobRef[], known: { bytes: number; objects: DigestSet } | null) =>
    rememberRemoteImage(store, location, tag, {
      index,
      root,
      bytes: objects.reduce((n, o) => n + o.size, known?.bytes ?? 0),
      objects: known ? known.objects.with(objects.map((o) => o.digest)) : DigestSet.of(objects.map((o) => o.digest)),
    })
  if (checked) return record(checked, null)
  const previous = await readKnownRemoteImage(store, location, tag)
  const extended = previous && (await extendKnownImage(store, root, previous))
  const walked = extended ? extended.beyond.objects : (await collectImage(store, root)).objects
  if (walked.every((o) => held(o.digest))) await record(walked, extended ? previous : null)
}
