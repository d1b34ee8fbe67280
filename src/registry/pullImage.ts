import type { KeyObject } from 'node:crypto'
import { DigestMismatchError, RemoteImageNotFoundError, SignatureError } from '../errors/index.js'
import { type Digest, sha256, shortId } from '../store/digest.js'
import { readRef, tagRef, updateRef } from '../store/refs.js'
import { withWriteLock } from '../store/storeLock.js'
import { forEachLimit } from '../util/forEachLimit.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { checkImage } from './checkImage.js'
import type { BlobRef } from './Descriptor.js'
import { parseImageIndex, parseSegmentManifest } from './imageManifest.js'
import { checkDeclaredSizes } from './checkDeclaredSizes.js'
import { type Limits, resolveLimits } from './limits.js'
import { type ConnectOptions, openTransport } from './openTransport.js'
import { type Remote, assertTag, parseRemote, remoteLocation } from './parseRemote.js'
import { readCapped } from './readCapped.js'
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
  verified: boolean
}

/**
 * Pull an image: fetch only the objects the store lacks, verifying each digest on
 * arrival, into a staging area; check the whole image (complete, well-formed, no
 * escaping symlinks); only then move the objects into the store, children first, and
 * point the tag at it. Anything wrong throws (exit 5) with the store unchanged. An
 * interrupted pull resumes where it stopped.
 */
export async function pullImage(args: PullArgs): Promise<PullResult> {
  const { store } = await openStore(args)
  const remote = parseRemote(args.remote)
  const transport = await openTransport(remote, args)
  const limits = resolveLimits(args.limits)
  const { manifest, bytes } = await fetchIndex(transport, remote, limits)
  const index = parseImageIndex(bytes, `image ${manifest}`)
  const verified = args.verifyKey !== undefined
  if (args.verifyKey !== undefined) await verifySignature(transport, manifest, loadPublicKey(args.verifyKey))
  const listed = new Map<Digest, BlobRef>()
  let fetchedBytes = bytes.length // manifests count as transferred bytes too
  await forEachLimit(index.segments, 8, async (segment) => {
    const { bytes, fetched } = await readSegment(store, transport, segment)
    if (fetched) fetchedBytes += bytes.length
    for (const o of parseSegmentManifest(bytes, `segment ${segment.digest}`)) listed.set(o.digest, o)
  })
  const staging = await Staging.open(store, `${remoteLocation(remote)}\0${manifest}`)
  const missing: BlobRef[] = []
  const tag = localTag(args.tag, remote, manifest)
  try {
    // asked only now: a pull of the same image we waited for may have brought them
    await forEachLimit([...listed.values()], 32, async (o) => {
      if (!(await store.has(o.digest))) missing.push(o)
    })
    checkDeclaredSizes(missing, limits, `image ${manifest}`)
    const progress = progressCounter('receiving', missing.length, missing.reduce((n, o) => n + o.size, 0), args.onProgress)
    await forEachLimit(missing, args.concurrency ?? 8, async (o) => {
      args.signal?.throwIfAborted()
      const received = await staging.download(transport, o, { signal: args.signal, onBytes: (n) => progress.addBytes(n) })
      fetchedBytes += received
      progress.objectDone()
    })
    progress.finish()
    const order = await checkImage({ root: index.root, locate: (d) => staging.locate(d), allowExternalSymlinks: args.allowExternalSymlinks ?? false })
    await withWriteLock(store, async () => {
      await staging.commit(order)
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
  return {
    id: index.root,
    remote: remoteLocation(remote),
    manifest,
    tag,
    objects: listed.size,
    totalBytes: [...listed.values()].reduce((n, o) => n + o.size, 0),
    fetchedObjects: missing.length,
    fetchedBytes,
    verified,
  }
}

/** The local tag: as asked, else the remote tag, `pulled-<id>` for a pull by digest, `latest` for none. */
function localTag(asked: string | undefined, remote: Remote, manifest: Digest): string {
  const reference = remote.reference
  return assertTag(asked ?? (reference === null ? 'latest' : 'tag' in reference ? reference.tag : `pulled-${shortId(manifest)}`))
}

/** The image's index by tag or digest; its digest is computed here, never taken from the remote. */
async function fetchIndex(transport: Transport, remote: Remote, limits: Limits): Promise<{ manifest: Digest; bytes: Buffer }> {
  const reference = remote.reference === null ? 'latest' : 'tag' in remote.reference ? remote.reference.tag : remote.reference.digest
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
