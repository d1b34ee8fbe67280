import type { KeyObject } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { RegistryRequestError } from '../errors/index.js'
import { type Digest, digestHex, sha256 } from '../store/digest.js'
import { resolveId } from '../store/resolveId.js'
import type { Store } from '../store/Store.js'
import { forEachLimit } from '../util/forEachLimit.js'
import { openStore, type StoreLocator } from '../store/findStore.js'
import { collectImage } from './collectImage.js'
import { findMissingObjects } from './findMissingObjects.js'
import type { BlobRef } from './Descriptor.js'
import { type BuiltManifest, type ConfigStyle, buildImageManifests, configBlob } from './imageManifest.js'
import { type ConnectOptions, openTransport } from './openTransport.js'
import { parseRemote, remoteLocation } from './parseRemote.js'
import { refTagName } from './refTagName.js'
import { rememberSegment } from './segmentCache.js'
import { buildSignature, loadPrivateKey, signatureTag } from './signing.js'
import { type ProgressListener, progressCounter } from './TransferProgress.js'
import type { Transport } from './Transport.js'

export interface PushArgs extends ConnectOptions, StoreLocator {
  /** What to push: a snapshot id, short id, head, tag or `HEAD~N`. */
  id: string
  /** `file:///dir[:tag]`, `oci://host[:port]/repo[:tag]`, `s3://bucket/prefix[:tag]`. */
  remote: string
  /** Ed25519 private key (PEM text, PEM file path or KeyObject): also push a signature of the image. */
  signingKey?: string | KeyObject
  /** Blobs in flight at once. */
  concurrency?: number
  signal?: AbortSignal
  onProgress?: ProgressListener
}

export interface PushResult {
  id: Digest
  remote: string
  tag: string
  /** Digest of the pushed index: `REMOTE@MANIFEST` names exactly this image. */
  manifest: Digest
  objects: number
  totalBytes: number
  /** Objects and bytes that actually travelled (the rest the remote had); bytes include manifests. */
  sentObjects: number
  sentBytes: number
  signed: boolean
}

/**
 * Push an image (a snapshot and everything it reaches) to a remote, sending only the
 * objects the remote lacks: segment manifests the remote already holds vouch for all
 * their objects, the rest are checked one by one. Blobs go up first, then segment
 * manifests, then the tagged index, so a tag never names something incomplete.
 */
export async function pushImage(args: PushArgs): Promise<PushResult> {
  const { store } = await openStore(args)
  const remote = parseRemote(args.remote)
  const id = await resolveId(store, args.id)
  const tag = remote.reference && 'tag' in remote.reference ? remote.reference.tag : await refTagName(store, args.id)
  const transport = await openTransport(remote, args)
  const objects = await collectImage(store, id)
  const totalBytes = objects.reduce((n, o) => n + o.size, 0)
  const sent = { objects: 0, bytes: 0 }
  const push = (config: ConfigStyle) => pushManifests({ store, transport, root: id, objects, config, tag, args, sent })
  let config: ConfigStyle = 'image'
  let index: BuiltManifest
  try {
    index = await push(config)
  } catch (err) {
    if (!(err instanceof RegistryRequestError) || err.data['status'] !== 400) throw err
    config = 'custom' // a registry that refuses the image config: push again with our own (objects are there already)
    index = await push(config)
  }
  if (args.signingKey) await pushSignature(store, transport, index, loadPrivateKey(args.signingKey), config)
  return {
    id,
    remote: remoteLocation(remote),
    tag,
    manifest: index.descriptor.digest,
    objects: objects.length,
    totalBytes,
    sentObjects: sent.objects,
    sentBytes: sent.bytes,
    signed: Boolean(args.signingKey),
  }
}

interface PushContext {
  store: Store
  transport: Transport
  root: Digest
  objects: BlobRef[]
  config: ConfigStyle
  tag: string
  args: PushArgs
  sent: { objects: number; bytes: number }
}

async function pushManifests({ store, transport, root, objects, config, tag, args, sent }: PushContext): Promise<BuiltManifest> {
  const { index, segments } = buildImageManifests({ root, objects, config })
  const missing = await findMissingObjects({ store, transport, segments, tag, onProgress: args.onProgress })
  const toSend = missing.objects
  const sending = progressCounter('sending', toSend.length, toSend.reduce((n, o) => n + o.size, 0), args.onProgress)
  await forEachLimit(toSend, args.concurrency ?? 8, async (object) => {
    args.signal?.throwIfAborted()
    await transport.putBlob(object, store.objectPath(object.digest), {
      signal: args.signal,
      onBytes: (n) => sending.addBytes(n),
      resumeState: store.path('tmp', `upload-${digestHex(sha256(`${transport.location}\0${object.digest}`)).slice(0, 24)}.json`),
    })
    sent.objects++
    sent.bytes += object.size
    sending.objectDone()
  })
  sending.finish()
  sent.bytes += await putBytesBlob(store, transport, configBlob(config))
  for (const segment of missing.segments) {
    await transport.putManifest(segment)
    sent.bytes += segment.bytes.length // manifests count as sent bytes too
  }
  await transport.putManifest(index, tag)
  sent.bytes += index.bytes.length
  for (const segment of segments) await rememberSegment(store, segment)
  return index
}

/** Send a small in-memory blob (a config, a signature) if the remote lacks it; returns the bytes sent. */
async function putBytesBlob(store: Store, transport: Transport, { descriptor, bytes }: { descriptor: BlobRef; bytes: Buffer }): Promise<number> {
  if ((await transport.statBlob(descriptor.digest)) !== null) return 0
  const tmp = store.tempPath('blob')
  try {
    await fs.writeFile(tmp, bytes)
    await transport.putBlob(descriptor, tmp)
  } finally {
    await fs.rm(tmp, { force: true })
  }
  return bytes.length
}

async function pushSignature(store: Store, transport: Transport, index: BuiltManifest, key: KeyObject, config: ConfigStyle): Promise<void> {
  const { blob, manifest } = buildSignature(index.descriptor, key, config)
  await putBytesBlob(store, transport, { descriptor: { digest: sha256(blob), size: blob.length }, bytes: blob })
  await transport.putManifest(manifest, signatureTag(index.descriptor.digest))
}
