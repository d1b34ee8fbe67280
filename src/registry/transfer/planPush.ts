import { type Digest, sha256 } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { REPACK_THRESHOLD, choosePacks } from '../pack/choosePacks.js'
import { collectImage } from './collectImage.js'
import type { BlobRef } from '../manifest/Descriptor.js'
import { DigestSet } from './DigestSet.js'
import { type PackPair, manifestConfig, pairedPacks, parseImageIndex } from '../manifest/imageManifest.js'
import { extendKnownImage, readKnownRemoteImage } from './knownRemoteImage.js'
import type { Limits } from '../pack/limits.js'
import { repositoryPacks } from '../pack/repositoryPacks.js'
import { readSegment } from '../cache/segmentCache.js'
import type { Transport } from '../transport/Transport.js'
import { type PackOptions, type PackWriter, openPackWriter } from '../pack/writePack.js'

/** What a push sends and what the image it tags is made of. */
export interface PushPlan {
  /** Packs on the remote the image uses as they are. */
  reuse: PackPair[]
  /** Objects for the one new pack, and which of them are structured (packed first). */
  send: BlobRef[]
  structured: ReadonlySet<Digest>
  /** The whole image: its object count and bytes, and the snapshots whose parents it leaves out. */
  objects: number
  bytes: number
  shallow: Digest[]
  repacked: boolean
  /** Whether the push continues an image this store pushed or pulled, the tag's or `from`'s (only what is new was walked). */
  continued: boolean
  /** The config the continued image's packs manifest names: the repository holds it already (null: not known). */
  heldConfig: Digest | null
  /** Every object of the image, remembered after the push for the next one; null for a shallow image. */
  members: DigestSet | null
  /**
   * The new pack when the whole image goes into it (a repository without packs, or a
   * repack): its file contents were added as the walk met them, its frames compressed
   * meanwhile; `finish` it with the structured objects of `send`, `close` it in any case.
   * Null: the pack is written from `send` after the plan.
   */
  pack: PackWriter | null
}

export interface PlanArgs {
  store: Store
  transport: Transport
  /** The tag pushed to; null for an untagged push. */
  tag: string | null
  /** The tag or manifest digest whose image (pushed or pulled by this store) the push continues, if any. */
  from: string | null
  id: Digest
  limits: Limits
  repack: boolean
  depth: number | undefined
  /** How the new pack is compressed. */
  compression: PackOptions
}

/** The plan of a push: continuing the image the tag names when this store pushed it, else from the repository's pack indexes. */
export async function planPush(args: PlanArgs): Promise<PushPlan> {
  return (await continuePushedImage(args)) ?? (await planFromIndexes(args))
}

/**
 * The common case of an agent pushing after each change: the tag still names the image
 * this store last pushed there (or pulled from there), and the new snapshot descends
 * from it (or `from` names such an image: a fan-out worker's result, from its base). The walk stops at that image's objects (their set, kept by that push or
 * pull), so it reads only what
 * changed, and the image keeps its packs without their indexes being read: one new
 * pack is added. Objects that only other tags' packs hold are sent again; nothing is
 * missed, since everything beyond the known image is sent.
 */
async function continuePushedImage({ store, transport, from, id, repack, depth }: PlanArgs): Promise<PushPlan | null> {
  if (repack || depth !== undefined || from === null) return null
  const known = await readKnownRemoteImage(store, transport.location, from)
  if (known === null) return null
  const current = await transport.getManifest(from)
  if (current === null || sha256(current.bytes) !== known.index) return null
  const index = parseImageIndex(current.bytes, `image ${from}`)
  if (index.shallow.length > 0 || index.segments.length !== 1) return null
  const segment = (await readSegment(store, transport, index.segments[0]!)).bytes
  const reuse = pairedPacks(segment, `manifest ${index.segments[0]!.digest}`)
  if (reuse === null || reuse.length >= REPACK_THRESHOLD) return null
  const extended = await extendKnownImage(store, id, known)
  if (extended === null) return null
  return {
    reuse,
    send: extended.beyond.objects,
    structured: extended.beyond.structured,
    objects: extended.objects,
    bytes: extended.bytes,
    shallow: [],
    repacked: false,
    continued: true,
    heldConfig: manifestConfig(segment, `manifest ${index.segments[0]!.digest}`),
    members: extended.members,
    pack: null,
  }
}

/**
 * Any push: the whole image walked, the packs of every tag in the repository learned from
 * their indexes. When all of it goes into the new pack (no packs there yet, or a repack),
 * the pack is built as the walk goes.
 */
async function planFromIndexes({ store, transport, tag, id, limits, repack, depth, compression }: PlanArgs): Promise<PushPlan> {
  const known = await repositoryPacks({ store, transport, tag, limits })
  const pack = repack || known.length === 0 ? openPackWriter(store, compression) : null
  try {
    const { objects, shallow, structured } = await collectImage(store, id, { depth, onContent: pack ? (digest, size) => pack.addContent({ digest, size }) : undefined })
    const plan = choosePacks({ objects, known, repack })
    return {
      reuse: plan.reuse.map((p) => p.pair),
      send: plan.send,
      structured,
      objects: objects.length,
      bytes: objects.reduce((n, o) => n + o.size, 0),
      shallow,
      repacked: plan.repacked,
      continued: false,
      heldConfig: null,
      members: shallow.length === 0 ? DigestSet.of(objects.map((o) => o.digest)) : null,
      pack,
    }
  } catch (err) {
    await pack?.close()
    throw err
  }
}
