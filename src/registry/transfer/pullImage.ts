import type { KeyObject } from 'node:crypto'
import { DigestMismatchError, InvalidImageError, InvalidPackError, RemoteImageNotFoundError } from '../../errors/index.js'
import { type Digest, sha256, shortId } from '../../objects/digest.js'
import { readRef, tagRef, updateRef } from '../../store/refs.js'
import { withWriteLock } from '../../store/storeLock.js'
import type { Store } from '../../store/Store.js'
import { forEachLimit } from '../../util/forEachLimit.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import { type CheckedImage, checkImage } from './checkImage.js'
import { recordShallow, shallowToDeepen } from './recordShallow.js'
import { recordForeignImage } from '../../store/foreignImages.js'
import { type ParsedIndex, parseImageIndex } from '../manifest/imageManifest.js'
import { type LoadedPack, loadPacks } from '../pack/loadPacks.js'
import type { PackSource } from '../pack/readPackRanges.js'
import { type ObjectArrivals, stagePackedObjects } from './stagePackedObjects.js'
import { type Limits, resolveLimits } from '../pack/limits.js'
import { type ConnectOptions, openTransport } from '../transport/openTransport.js'
import { type Reference, assertTag, parseRemote, remoteLocation } from '../transport/parseRemote.js'
import { refTagName } from '../transport/refTagName.js'
import { rememberPulledImage } from './knownRemoteImage.js'
import { readSegment } from '../cache/segmentCache.js'
import { loadPublicKey } from '../signing/signingKeys.js'
import { verifyImageSignature } from '../signing/verifyImageSignature.js'
import { Staging } from './Staging.js'
import type { ProgressListener } from '../transport/TransferProgress.js'
import type { Transport } from '../transport/Transport.js'

export interface PullArgs extends ConnectOptions, StoreLocator {
  /** `file:///dir[:tag|@digest]`, `oci://host[:port]/repo[:tag|@digest]`, `s3://bucket/prefix[:tag|@digest]`; default tag: the head HEAD follows (as push names it), `latest` when HEAD is detached. */
  remote: string
  /** The local tag to point at the image (default: the remote tag; `pulled-<id>` for a digest). */
  tag?: string
  /** Refuse the image unless it carries a valid Ed25519 signature by this key (PEM text, PEM file or KeyObject) of its digest, this repository and this tag; a key that is not one is a UsageError (exit 2). */
  verifyKey?: string | KeyObject
  allowExternalSymlinks?: boolean
  signal?: AbortSignal
  onProgress?: ProgressListener
}

/** Told of an image's packed objects as a pull brings them (a clone writes files while the pull goes on). */
export interface ArrivalListener extends ObjectArrivals {
  /** The image's root snapshot, before the first object. */
  image(root: Digest): void
}

export interface PullResult {
  id: Digest
  remote: string
  manifest: Digest
  /** The local tag now pointing at the image. */
  tag: string
  objects: number
  totalBytes: number
  /** Objects and bytes that travelled (the rest the store had); bytes include manifests. */
  fetchedObjects: number
  fetchedBytes: number
  /** Snapshots whose parents the image leaves out (a shallow image). */
  shallow: Digest[]
  verified: boolean
}

/**
 * Pull an image: fetch only the packs, or byte ranges of packs, holding objects the
 * store lacks, verifying each object's digest on arrival, into a staging area; check the
 * whole image (complete but for the history a shallow image leaves out, well-formed, no
 * escaping symlinks); only then move the objects into the store, children first, and
 * point the tag at it. With `verifyKey`, the image must carry a signature by that key of
 * its digest, this repository and the tag pulled (verifyImageSignature).
 * Anything wrong throws (exit 5) with the store unchanged. An interrupted pull keeps
 * the objects it staged and fetches only the frames holding the rest.
 */
export async function pullImage(args: PullArgs, arrivals?: ArrivalListener): Promise<PullResult> {
  const { store } = await openStore(args)
  const remote = parseRemote(args.remote)
  const reference = remote.reference ?? { tag: await refTagName(store, 'HEAD') }
  const verifyKey = args.verifyKey === undefined ? null : loadPublicKey(args.verifyKey)
  const transport = await openTransport(remote, args)
  const limits = resolveLimits(args.limits)
  const { manifest, bytes } = await fetchIndex(transport, reference, limits)
  const index = parseImageIndex(bytes, `image ${manifest}`)
  const verified = verifyKey !== null
  if (verifyKey !== null) await verifyImageSignature(transport, { digest: manifest, repository: remoteLocation(remote), tag: pulledTag(reference) }, verifyKey)
  const fetched = { bytes: bytes.length } // manifests and indexes count as transferred bytes too
  const packs = await readManifests(store, transport, index, limits, fetched)
  const staging = await Staging.open(store, `${remoteLocation(remote)}\0${manifest}`)
  const tag = localTag(args.tag, reference, manifest)
  arrivals?.image(index.root)
  let added = 0
  let checked: CheckedImage
  try {
    await checkPackSizes(transport, packs)
    fetched.bytes += await stagePackedObjects({
      store,
      staging,
      packs: packs.map(({ index: packIndex, indexBytes }) => ({ index: packIndex, indexBytes, source: remotePack(transport, packIndex.pack) })),
      limits,
      where: `image ${manifest}`,
      signal: args.signal,
      onProgress: args.onProgress,
      arrivals,
    })
    const deepen = await shallowToDeepen(store, index.shallow)
    checked = await checkImage({
      root: index.root,
      describe: (d) => staging.describe(d),
      allowExternalSymlinks: args.allowExternalSymlinks ?? false,
      shallow: new Set(index.shallow),
      deepen,
      limits,
    })
    await withWriteLock(store, async () => {
      added = await staging.commit(checked.order, new Set(index.shallow))
      await recordShallow(store, index.shallow, deepen)
      await recordForeignImage(store, index.root)
      await store.sync()
      if ((await readRef(store, tagRef(tag))) !== index.root) {
        await updateRef({ store, name: tagRef(tag), id: index.root, message: `pull ${remoteLocation(remote)} ${manifest}` })
      }
    })
  } catch (err) {
    await staging.close() // keep what arrived: the next pull resumes from it
    throw err
  }
  await staging.discard()
  if (index.shallow.length === 0) {
    let held: Set<Digest> | undefined // built only if asked: a clone's record needs no lookup
    const inPacks = (d: Digest) => (held ??= new Set(packs.flatMap((p) => p.index.objects.map((o) => o.digest)))).has(d)
    // by the tag or digest asked: a push `from` either continues the image
    await rememberPulledImage(store, transport.location, referenceName(reference), { index: manifest, root: index.root, checked: checked.whole, held: inPacks })
  }
  return {
    id: index.root,
    remote: remoteLocation(remote),
    manifest,
    tag,
    objects: index.objects,
    totalBytes: index.bytes,
    fetchedObjects: added,
    fetchedBytes: fetched.bytes,
    shallow: index.shallow,
    verified,
  }
}

/** The image's packs, with their checked indexes. */
async function readManifests(store: Store, transport: Transport, index: ParsedIndex, limits: Limits, fetched: { bytes: number }): Promise<LoadedPack[]> {
  const packs: LoadedPack[] = []
  await forEachLimit(index.segments, 8, async (segment) => {
    const read = await readSegment(store, transport, segment)
    if (read.fetched) fetched.bytes += read.bytes.length
    packs.push(...(await loadPacks({ store, transport, manifest: read.bytes, where: `manifest ${segment.digest}`, limits, onFetched: (n) => (fetched.bytes += n) })))
  })
  return packs
}

/** Every pack is exactly the size its manifest declares (a bigger one is refused before a byte of it is read). */
async function checkPackSizes(transport: Transport, packs: LoadedPack[]): Promise<void> {
  await forEachLimit(packs, 8, async ({ pair }) => {
    const size = await transport.statBlob(pair.pack.digest)
    if (size === null) throw new InvalidImageError(`the image names pack ${pair.pack.digest}, which ${transport.location} does not have`, { digest: pair.pack.digest })
    if (size !== pair.pack.size)
      throw new InvalidPackError(`pack ${pair.pack.digest} in ${transport.location} is ${size} bytes, not the ${pair.pack.size} its manifest declares: refusing it`, {
        digest: pair.pack.digest,
        size,
      })
  })
}

/** A pack on the remote, read by byte ranges. */
function remotePack(transport: Transport, pack: Digest): PackSource {
  return { where: `pack ${pack} in ${transport.location}`, open: (offset, length, signal) => transport.openBlob(pack, offset, { length, signal }) }
}

/** What the pull asks for: a tag (the remote's, else the head HEAD follows, as push names it: `refTagName`) or a digest. */
type PulledReference = NonNullable<Reference>

function referenceName(reference: PulledReference): string {
  return 'tag' in reference ? reference.tag : reference.digest
}

/** The remote tag pulled; null for a pull by digest. */
function pulledTag(reference: PulledReference): string | null {
  return 'tag' in reference ? reference.tag : null
}

/** The local tag: as asked, else the remote tag pulled, `pulled-<id>` for a pull by digest. */
function localTag(asked: string | undefined, reference: PulledReference, manifest: Digest): string {
  return assertTag(asked ?? pulledTag(reference) ?? `pulled-${shortId(manifest)}`)
}

/** The image's index by tag or digest; its digest is computed here, never taken from the remote. */
async function fetchIndex(transport: Transport, pulled: PulledReference, limits: Limits): Promise<{ manifest: Digest; bytes: Buffer }> {
  const reference = referenceName(pulled)
  const fetched = await transport.getManifest(reference)
  if (fetched === null) throw new RemoteImageNotFoundError(`no image ${reference} in ${transport.location}`, { remote: transport.location, reference })
  const manifest = sha256(fetched.bytes)
  const expected = 'digest' in pulled ? pulled.digest : fetched.claimed
  if (fetched.bytes.length > limits.maxManifestBytes || (expected !== undefined && manifest !== expected)) {
    throw new DigestMismatchError(`image manifest ${reference} from ${transport.location} hashes to ${manifest}, not ${expected}: refusing it`, {
      reference,
      expected,
      actual: manifest,
    })
  }
  return { manifest, bytes: fetched.bytes }
}
