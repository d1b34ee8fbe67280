import type { KeyObject } from 'node:crypto'
import { DigestMismatchError, InvalidImageError, InvalidPackError, RemoteImageNotFoundError, SignatureError } from '../errors/index.js'
import { type Digest, sha256, shortId } from '../store/digest.js'
import { readRef, tagRef, updateRef } from '../store/refs.js'
import { withWriteLock } from '../store/storeLock.js'
import type { Store } from '../store/Store.js'
import { forEachLimit } from '../util/forEachLimit.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { type CheckedImage, checkImage } from './checkImage.js'
import { recordShallow, shallowToDeepen } from './recordShallow.js'
import type { BlobRef } from './Descriptor.js'
import { type ParsedIndex, isPacksManifest, parseImageIndex, parseSegmentManifest } from './imageManifest.js'
import { type LoadedPack, loadPacks } from './loadPacks.js'
import type { PackSource } from './readPackRanges.js'
import { type ObjectArrivals, stagePackedObjects } from './stagePackedObjects.js'
import { checkDeclaredSizes } from './checkDeclaredSizes.js'
import { type Limits, resolveLimits } from './limits.js'
import { type ConnectOptions, openTransport } from './openTransport.js'
import { type Remote, assertTag, parseRemote, remoteLocation } from './parseRemote.js'
import { readCapped } from './readCapped.js'
import { rememberPulledImage } from './knownRemoteImage.js'
import { readSegment } from './segmentCache.js'
import { checkSignature, loadPublicKey, signatureLayer, signatureTag } from './signing.js'
import { Staging } from './Staging.js'
import { type ProgressListener, progressCounter } from './TransferProgress.js'
import type { Transport } from './Transport.js'

export interface PullArgs extends ConnectOptions, StoreLocator {
  /** `file:///dir[:tag|@digest]`, `oci://host[:port]/repo[:tag|@digest]`, `s3://bucket/prefix[:tag|@digest]`; default tag `latest`. */
  remote: string
  /** The local tag to point at the image (default: the remote tag; `pulled-<id>` for a digest). */
  tag?: string
  /** Refuse the image unless it carries a valid Ed25519 signature by this key (PEM text, PEM file or KeyObject). */
  verifyKey?: string | KeyObject
  allowExternalSymlinks?: boolean
  concurrency?: number
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
 * store lacks (an image pushed before packs: those objects one by one), verifying each
 * object's digest on arrival, into a staging area; check the whole image (complete but
 * for the history a shallow image leaves out, well-formed, no escaping symlinks); only
 * then move the objects into the store, children first, and point the tag at it.
 * Anything wrong throws (exit 5) with the store unchanged. An interrupted pull keeps
 * the objects it staged and fetches only the frames holding the rest.
 */
export async function pullImage(args: PullArgs, arrivals?: ArrivalListener): Promise<PullResult> {
  const { store } = await openStore(args)
  const remote = parseRemote(args.remote)
  const transport = await openTransport(remote, args)
  const limits = resolveLimits(args.limits)
  const { manifest, bytes } = await fetchIndex(transport, remote, limits)
  const index = parseImageIndex(bytes, `image ${manifest}`)
  const verified = args.verifyKey !== undefined
  if (args.verifyKey !== undefined) await verifySignature(transport, manifest, loadPublicKey(args.verifyKey))
  const fetched = { bytes: bytes.length } // manifests and indexes count as transferred bytes too
  const { packs, segmentObjects } = await readManifests(store, transport, index, limits, fetched)
  const staging = await Staging.open(store, `${remoteLocation(remote)}\0${manifest}`)
  const tag = localTag(args.tag, remote, manifest)
  arrivals?.image(index.root)
  let added = 0
  let checked: CheckedImage
  try {
    // asked only now: a pull of the same image we waited for may have brought the objects
    fetched.bytes += await stageSegmentObjects(store, staging, transport, segmentObjects, limits, manifest, args)
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
    const inPacks = (d: Digest) => (held ??= new Set([...packs.flatMap((p) => p.index.objects.map((o) => o.digest)), ...segmentObjects.keys()])).has(d)
    // by the tag or digest asked: a push `from` either continues the image
    await rememberPulledImage(store, transport.location, remoteReference(remote), { index: manifest, root: index.root, checked: checked.whole, held: inPacks })
  }
  return {
    id: index.root,
    remote: remoteLocation(remote),
    manifest,
    tag,
    objects: segmentObjects.size > 0 ? segmentObjects.size : index.objects,
    totalBytes: segmentObjects.size > 0 ? [...segmentObjects.values()].reduce((n, o) => n + o.size, 0) : index.bytes,
    fetchedObjects: added,
    fetchedBytes: fetched.bytes,
    shallow: index.shallow,
    verified,
  }
}

/** The image's packs (with their checked indexes) and, for an image pushed one object per blob, its object list. */
async function readManifests(
  store: Store,
  transport: Transport,
  index: ParsedIndex,
  limits: Limits,
  fetched: { bytes: number },
): Promise<{ packs: LoadedPack[]; segmentObjects: Map<Digest, BlobRef> }> {
  const packs: LoadedPack[] = []
  const segmentObjects = new Map<Digest, BlobRef>()
  await forEachLimit(index.segments, 8, async (segment) => {
    const read = await readSegment(store, transport, segment)
    if (read.fetched) fetched.bytes += read.bytes.length
    if (isPacksManifest(read.bytes)) {
      packs.push(...(await loadPacks({ store, transport, manifest: read.bytes, where: `manifest ${segment.digest}`, limits, onFetched: (n) => (fetched.bytes += n) })))
    } else {
      for (const o of parseSegmentManifest(read.bytes, `segment ${segment.digest}`)) segmentObjects.set(o.digest, o)
    }
  })
  return { packs, segmentObjects }
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

/** An image pushed before packs (one blob per object): fetch the objects the store lacks one by one, as then. */
async function stageSegmentObjects(
  store: Store,
  staging: Staging,
  transport: Transport,
  listed: Map<Digest, BlobRef>,
  limits: Limits,
  manifest: Digest,
  args: PullArgs,
): Promise<number> {
  const missing: BlobRef[] = []
  await forEachLimit([...listed.values()], 32, async (o) => {
    if (!(await store.has(o.digest))) missing.push(o)
  })
  checkDeclaredSizes(missing, limits, `image ${manifest}`)
  const progress = progressCounter(
    'receiving',
    missing.length,
    missing.reduce((n, o) => n + o.size, 0),
    args.onProgress,
  )
  let bytes = 0
  await forEachLimit(missing, args.concurrency ?? 8, async (o) => {
    args.signal?.throwIfAborted()
    bytes += await staging.download(transport, o, { signal: args.signal, onBytes: (n) => progress.addBytes(n) })
    progress.objectsDone()
  })
  progress.finish()
  return bytes
}

/** What the pull asks the remote for: the digest, the tag, or `latest` when none is named. */
function remoteReference({ reference }: Remote): string {
  return reference === null ? 'latest' : 'tag' in reference ? reference.tag : reference.digest
}

/** The remote tag pulled; null for a pull by digest. */
function pulledTag(remote: Remote): string | null {
  return remote.reference !== null && 'digest' in remote.reference ? null : remoteReference(remote)
}

/** The local tag: as asked, else the remote tag, `pulled-<id>` for a pull by digest, `latest` for none. */
function localTag(asked: string | undefined, remote: Remote, manifest: Digest): string {
  return assertTag(asked ?? pulledTag(remote) ?? `pulled-${shortId(manifest)}`)
}

/** The image's index by tag or digest; its digest is computed here, never taken from the remote. */
async function fetchIndex(transport: Transport, remote: Remote, limits: Limits): Promise<{ manifest: Digest; bytes: Buffer }> {
  const reference = remoteReference(remote)
  const fetched = await transport.getManifest(reference)
  if (fetched === null) throw new RemoteImageNotFoundError(`no image ${reference} in ${transport.location}`, { remote: transport.location, reference })
  const manifest = sha256(fetched.bytes)
  const expected = remote.reference && 'digest' in remote.reference ? remote.reference.digest : fetched.claimed
  if (fetched.bytes.length > limits.maxManifestBytes || (expected !== undefined && manifest !== expected)) {
    throw new DigestMismatchError(`image manifest ${reference} from ${transport.location} hashes to ${manifest}, not ${expected}: refusing it`, {
      reference,
      expected,
      actual: manifest,
    })
  }
  return { manifest, bytes: fetched.bytes }
}

async function verifySignature(transport: Transport, manifest: Digest, key: KeyObject): Promise<void> {
  const signature = await transport.getManifest(signatureTag(manifest))
  if (signature === null) throw new SignatureError(`image ${manifest} in ${transport.location} is not signed: refusing it`, { manifest })
  const layer = signatureLayer(signature.bytes)
  const stream = await transport.openBlob(layer.digest, 0)
  const document = await readCapped(stream?.body ?? null, 64 * 1024, 'signature')
  if (sha256(document) !== layer.digest) throw new SignatureError(`the signature blob of ${manifest} is corrupt: refusing the image`)
  checkSignature(document, manifest, key)
}
