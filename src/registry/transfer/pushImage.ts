import type { KeyObject } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { CorruptDataError, UsageError } from '../../errors/index.js'
import { type Digest, digestHex, sha256 } from '../../objects/digest.js'
import { resolveId } from '../../store/resolveId.js'
import type { Store } from '../../store/Store.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import type { BlobRef } from '../manifest/Descriptor.js'
import { type BuiltManifest, EMPTY_CONFIG, type PackPair, buildPackedImage } from '../manifest/imageManifest.js'
import { resolveLimits } from '../pack/limits.js'
import { rememberPackIndex } from '../pack/loadPacks.js'
import { type ConnectOptions, openTransport } from '../transport/openTransport.js'
import { type Remote, parseRemote, remoteLocation } from '../transport/parseRemote.js'
import { rememberRemoteImage } from './knownRemoteImage.js'
import { planPush } from './planPush.js'
import { refTagName } from '../transport/refTagName.js'
import { rememberSegment } from '../cache/segmentCache.js'
import { MAX_SIGNATURES, type SignedImage, signatureBlob, signatureLayers, signatureManifest, signatureTag } from '../signing/signing.js'
import { loadPrivateKey } from '../signing/signingKeys.js'
import { type ProgressListener, progressCounter } from '../transport/TransferProgress.js'
import { settleAll } from '../../util/settleAll.js'
import type { Transport } from '../transport/Transport.js'
import { type PackOptions, type PackWriter, writePack } from '../pack/writePack.js'

export interface PushArgs extends ConnectOptions, StoreLocator {
  /** What to push: a snapshot id, short id, head, tag or `HEAD~N`. */
  id: string
  /** `file:///dir[:tag]`, `oci://host[:port]/repo[:tag]`, `s3://bucket/prefix[:tag]`. */
  remote: string
  /** Ed25519 private key (PEM text, PEM file path or KeyObject): also push a signature of the image. */
  signingKey?: string | KeyObject
  /** Send the whole image as one new pack, whatever the remote holds already. */
  repack?: boolean
  /** Send the snapshot and its history only this many snapshots deep (1: the snapshot alone). */
  depth?: number
  /**
   * A tag or manifest digest (`sha256:…`) of the same repository naming an image this
   * store pushed or pulled, which the snapshot descends from: only what lies beyond it is
   * walked and sent, its packs reused unread (default: the tag pushed to). Anything else
   * (the tag moved, the snapshot does not descend from it) falls back to the indexes.
   */
  from?: string
  /**
   * Push the image by its manifest digest alone: no tag is set or moved, and nothing is
   * remembered for a later push (no record to continue, no manifest or pack index kept in
   * the store's registry cache; `from` still applies). `REMOTE@MANIFEST` names
   * it; a registry's garbage collection may remove untagged images. For images nobody
   * pushes onto, such as a fan-out worker's results: a repository's tags are what a push to
   * a new tag reads, one request each.
   */
  untagged?: boolean
  /**
   * zstd level of the new pack, 1 to 19, at which all of it is compressed. Without it, a
   * frame of the store's packs (a cold snapshot's, a pull's) that holds only objects the
   * pack takes goes as it is, checked and not compressed again, and the rest at level 3.
   */
  level?: number
  signal?: AbortSignal
  onProgress?: ProgressListener
}

export interface PushResult {
  id: Digest
  remote: string
  /** The tag set, or null for an untagged push. */
  tag: string | null
  /** Digest of the pushed index: `REMOTE@MANIFEST` names exactly this image. */
  manifest: Digest
  objects: number
  totalBytes: number
  /** Objects that travelled in the new pack (the rest the remote's packs held), and the bytes sent, manifests and indexes included. */
  sentObjects: number
  sentBytes: number
  /** Packs the image spans on the remote, and whether this push repacked (asked, or past the threshold). */
  packs: number
  repacked: boolean
  /** Whether the push continued an image this store pushed or pulled (the tag's, or `from`'s): only what the snapshot added since was walked, that image's packs reused unread. */
  continued: boolean
  /** Snapshots whose parents were left out (`depth`). */
  shallow: Digest[]
  signed: boolean
}

/**
 * Push an image (a snapshot and everything it reaches, or its history only `depth`
 * deep) to a remote as packs: the packs the repository's images hold already are
 * learned from their indexes, and one new pack carries exactly the objects they lack.
 * When the tag names the image this store pushed there last, and the snapshot descends
 * from it, only what lies beyond that image is walked and sent (planPush).
 * The pack and its index go up first, then the manifest naming the image's packs, then
 * the tagged index, so a tag never names something incomplete. The pack's bytes depend
 * only on the image walked (its objects, in the walk's order) and the frames the store's
 * packs hold, so an interrupted push, walking it again, finds the pack it sent and sends
 * it once.
 */
export async function pushImage(args: PushArgs): Promise<PushResult> {
  const { store } = await openStore(args)
  const remote = parseRemote(args.remote)
  checkUntagged(remote, args)
  const signingKey = args.signingKey ? loadPrivateKey(args.signingKey) : null
  const id = await resolveId(store, args.id)
  const tag = args.untagged ? null : await pushedTag(store, remote, args.id)
  const transport = await openTransport(remote, args)
  const compression = { level: args.level ?? 3, keep: args.level === undefined }
  const plan = await planPush({
    store,
    transport,
    tag,
    from: args.from ?? tag,
    id,
    limits: resolveLimits(args.limits),
    repack: args.repack ?? false,
    depth: args.depth,
    compression,
  })
  const sent = { objects: 0, bytes: 0 }
  // the empty config goes up beside the pack (a small push is mostly round trips), unless the image continued names it already
  const [fresh, configBytes] = await settleAll<[PackPair | null, number]>([
    plan.send.length > 0 ? sendPack(store, transport, { objects: plan.send, structured: plan.structured, started: plan.pack, compression }, args, sent) : Promise.resolve(null),
    plan.heldConfig === EMPTY_CONFIG.descriptor.digest ? Promise.resolve(0) : putBytesBlob(store, transport, EMPTY_CONFIG),
  ]).finally(() => plan.pack?.close())
  sent.bytes += configBytes
  args.signal?.throwIfAborted()
  const packs: PackPair[] = [...plan.reuse, ...(fresh ? [fresh] : [])]
  const index = await pushManifests({ store, transport, tag, sent, image: { root: id, packs, objects: plan.objects, bytes: plan.bytes, shallow: plan.shallow } })
  if (plan.members && tag !== null)
    await rememberRemoteImage(store, transport.location, tag, { index: index.descriptor.digest, root: id, bytes: plan.bytes, objects: plan.members })
  if (signingKey !== null && tag !== null) {
    await pushSignature(store, transport, index, { digest: index.descriptor.digest, repository: remoteLocation(remote), tag }, signingKey)
  }
  return {
    id,
    remote: remoteLocation(remote),
    tag,
    manifest: index.descriptor.digest,
    objects: plan.objects,
    totalBytes: plan.bytes,
    sentObjects: sent.objects,
    sentBytes: sent.bytes,
    packs: packs.length,
    repacked: plan.repacked,
    continued: plan.continued,
    shallow: plan.shallow,
    signed: Boolean(args.signingKey),
  }
}

/** The tag a push sets: the remote's, else the name the id was given by (a branch or tag), else `latest`. */
async function pushedTag(store: Store, remote: Remote, id: string): Promise<string> {
  return remote.reference && 'tag' in remote.reference ? remote.reference.tag : await refTagName(store, id)
}

/** An untagged push takes no reference in its remote (a digest would be neither checked nor continued) and no signing key (a signature is found by a tag of its own). */
function checkUntagged(remote: Remote, { untagged = false, signingKey }: Pick<PushArgs, 'untagged' | 'signingKey'>): void {
  if (!untagged) return
  if (remote.reference) throw new UsageError(`an untagged push names no reference: give the remote as ${remoteLocation(remote)}`, { option: 'untagged' })
  if (signingKey) throw new UsageError('an untagged push cannot be signed: a signature is found by a tag of its own', { option: 'untagged' })
}

/** Write the objects as one pack (in the store's tmp/; `started` holds their contents already), send it and its index unless the remote has them. */
async function sendPack(
  store: Store,
  transport: Transport,
  { objects, structured, started, compression }: { objects: BlobRef[]; structured: ReadonlySet<Digest>; started: PackWriter | null; compression: PackOptions },
  args: PushArgs,
  sent: { objects: number; bytes: number },
): Promise<PackPair> {
  const file = store.tempPath('pack')
  try {
    const packing = progressCounter(
      'packing',
      objects.length,
      objects.reduce((n, o) => n + o.size, 0),
      args.onProgress,
    )
    const onBytes = (n: number) => packing.addBytes(n)
    const pack = started
      ? await started.finish(
          file,
          objects.filter((o) => structured.has(o.digest)),
          { onBytes },
        )
      : await writePack(store, objects, file, { ...compression, structured, onBytes })
    packing.finish()
    const ref = { digest: pack.digest, size: pack.size }
    const index = { digest: sha256(pack.indexBytes), size: pack.indexBytes.length }
    // the pack and its index side by side: a small push is mostly round trips
    const [packBytes, indexBytes] = await settleAll<[number, number]>([
      sendPackFile(store, transport, file, ref, objects.length, args),
      putBytesBlob(store, transport, { descriptor: index, bytes: pack.indexBytes }, { fresh: true }),
    ])
    if (packBytes > 0) sent.objects += objects.length
    sent.bytes += packBytes + indexBytes
    if (!args.untagged) await rememberPackIndex(store, index, pack.indexBytes) // an untagged image is never read back through this store: a worker's cache would gain two files a job
    return { pack: ref, index }
  } finally {
    await fs.rm(file, { force: true })
  }
}

/**
 * A pack (and its index) smaller than this is sent without asking whether the remote has
 * it (only an interrupted push of the same image would have sent it): the question is a
 * round trip, as sending it is, and a push of one change is mostly round trips.
 */
const ASK_FIRST_BYTES = 256 * 1024

/** Send the pack file unless the remote has it (an interrupted push's; asked only of a big one); returns the bytes sent. */
async function sendPackFile(store: Store, transport: Transport, file: string, ref: BlobRef, objects: number, args: PushArgs): Promise<number> {
  if (ref.size >= ASK_FIRST_BYTES && (await transport.statBlob(ref.digest)) === ref.size) return 0
  const sending = progressCounter('sending', objects, ref.size, args.onProgress)
  await transport.putBlob(ref, file, {
    signal: args.signal,
    onBytes: (n) => sending.addBytes(n),
    resumeState: store.path('tmp', `upload-${digestHex(sha256(`${transport.location}\0${ref.digest}`)).slice(0, 24)}.json`),
  })
  sending.finish()
  return ref.size
}

async function pushManifests({
  store,
  transport,
  tag,
  sent,
  image,
}: {
  store: Store
  transport: Transport
  tag: string | null
  sent: { objects: number; bytes: number }
  image: Parameters<typeof buildPackedImage>[0]
}): Promise<BuiltManifest> {
  const { index, manifest } = buildPackedImage(image)
  await transport.putManifest(manifest) // the same bytes again if it is there: one round trip, as asking would be
  sent.bytes += manifest.bytes.length // manifests count as sent bytes too
  await transport.putManifest(index, tag ?? undefined)
  sent.bytes += index.bytes.length
  if (tag !== null) await rememberSegment(store, manifest)
  return index
}

/**
 * Send an in-memory blob (a pack index, a config, a signature) if the remote lacks it;
 * returns the bytes sent. `fresh`: content this push made (a pack's index), asked about
 * only when big (ASK_FIRST_BYTES); a config, which every image shares, is always asked about.
 */
async function putBytesBlob(store: Store, transport: Transport, { descriptor, bytes }: { descriptor: BlobRef; bytes: Buffer }, { fresh = false } = {}): Promise<number> {
  const ask = !fresh || descriptor.size >= ASK_FIRST_BYTES
  if (ask && (await transport.statBlob(descriptor.digest)) !== null) return 0
  const tmp = store.tempPath('blob')
  try {
    await fs.writeFile(tmp, bytes)
    await transport.putBlob(descriptor, tmp)
  } finally {
    await fs.rm(tmp, { force: true })
  }
  return bytes.length
}

/**
 * Sign the image as pushed (its index, this repository, this tag) and keep the signature
 * beside the others the image has (signed for other tags, repositories or keys), the
 * newest MAX_SIGNATURES, so that pushing it under a second tag leaves the first verifiable.
 */
async function pushSignature(store: Store, transport: Transport, index: BuiltManifest, image: SignedImage, key: KeyObject): Promise<void> {
  const blob = signatureBlob(image, key)
  const layer = { digest: sha256(blob), size: blob.length }
  await putBytesBlob(store, transport, { descriptor: layer, bytes: blob })
  const kept = await signaturesKept(transport, signatureTag(image.digest))
  const layers = [...kept.filter((l) => l.digest !== layer.digest), layer].slice(-MAX_SIGNATURES)
  await transport.putManifest(signatureManifest(index.descriptor, layers), signatureTag(image.digest))
}

/** The signatures the remote keeps for an image already; none when it has no signature manifest, or one that is malformed. */
async function signaturesKept(transport: Transport, tag: string): Promise<BlobRef[]> {
  const existing = await transport.getManifest(tag)
  try {
    return existing === null ? [] : signatureLayers(existing.bytes)
  } catch (err) {
    if (err instanceof CorruptDataError) return [] // replaced by a well-formed one
    throw err
  }
}
