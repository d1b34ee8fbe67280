import { type KeyObject, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { SignatureError, UsageError } from '../errors/index.js'
import { type Digest, sha256 } from '../store/digest.js'
import { canonicalBytes } from '../util/canonicalJson.js'
import type { Descriptor } from './Descriptor.js'
import { type BuiltManifest, type ConfigStyle, configBlob } from './imageManifest.js'
import { MediaType } from './mediaTypes.js'

/** The signature document, stored as the one layer of a signature manifest. */
export interface SignatureDocument {
  kind: 'signature'
  schemaVersion: 1
  algorithm: 'ed25519'
  manifest: Digest
  publicKey: string
  signature: string
}

/** The tag a signature of `manifest` lives under (the cosign-style fallback for registries without the referrers API). */
export function signatureTag(manifest: Digest): string {
  return `${manifest.replace(':', '-')}.sig`
}

/** What is signed: a domain-separated statement naming the image manifest's digest. */
function statement(manifest: Digest): Buffer {
  return Buffer.from(`forkpoint image signature v1\n${manifest}\n`)
}

/** A key given as PEM text or as the path of a PEM file. */
function pemOf(keyOrPath: string): string {
  if (keyOrPath.includes('-----BEGIN')) return keyOrPath
  if (!existsSync(keyOrPath)) throw new UsageError(`signing key ${keyOrPath} is neither PEM text nor a file`)
  return readFileSync(keyOrPath, 'utf8')
}

/** The signing key from FORKPOINT_SIGNING_KEY (PEM text or a PEM file's path); UsageError when unset. */
export function signingKeyFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const key = env['FORKPOINT_SIGNING_KEY']
  if (!key) throw new UsageError('--sign needs an Ed25519 private key in FORKPOINT_SIGNING_KEY (PEM text or a file path)')
  return key
}

export function loadPrivateKey(key: string | KeyObject): KeyObject {
  const object = typeof key === 'string' ? createPrivateKey(pemOf(key)) : key
  if (object.asymmetricKeyType !== 'ed25519') throw new UsageError(`signing key must be Ed25519, not ${object.asymmetricKeyType ?? 'symmetric'}`)
  return object
}

/** A verify key as a public key (a private key is accepted too and its public half used). */
export function loadPublicKey(key: string | KeyObject): KeyObject {
  const object = typeof key === 'string' ? createPublicKey(pemOf(key)) : key.type === 'private' ? createPublicKey(key) : key
  if (object.asymmetricKeyType !== 'ed25519') throw new UsageError(`verify key must be Ed25519, not ${object.asymmetricKeyType ?? 'symmetric'}`)
  return object
}

/** The signature blob and the manifest that carries it (with the signed index as its subject). */
export function buildSignature(index: Descriptor, key: KeyObject, config: ConfigStyle): { blob: Buffer; manifest: BuiltManifest } {
  const document: SignatureDocument = {
    kind: 'signature',
    schemaVersion: 1,
    algorithm: 'ed25519',
    manifest: index.digest,
    publicKey: createPublicKey(key).export({ type: 'spki', format: 'der' }).toString('base64'),
    signature: sign(null, statement(index.digest), key).toString('base64'),
  }
  const blob = canonicalBytes(document)
  const bytes = canonicalBytes({
    schemaVersion: 2,
    mediaType: MediaType.manifest,
    artifactType: MediaType.signature,
    config: configBlob(config).descriptor,
    layers: [{ mediaType: MediaType.signatureLayer, digest: sha256(blob), size: blob.length }],
    subject: { mediaType: index.mediaType, digest: index.digest, size: index.size },
  })
  return { blob, manifest: { descriptor: { mediaType: MediaType.manifest, digest: sha256(bytes), size: bytes.length, artifactType: MediaType.signature }, bytes } }
}

/** The signature layer's digest from a signature manifest. */
export function signatureLayer(manifest: Buffer): { digest: Digest; size: number } {
  try {
    const parsed = JSON.parse(manifest.toString('utf8')) as { artifactType?: string; layers?: Array<{ digest: Digest; size: number }> }
    const layer = parsed.layers?.[0]
    if (parsed.artifactType === MediaType.signature && layer) return layer
  } catch {
    // reported below
  }
  throw new SignatureError('the signature manifest is malformed')
}

/** Throw SignatureError unless `document` is a valid signature of `manifest` by `key`. */
export function checkSignature(document: Buffer, manifest: Digest, key: KeyObject): void {
  let parsed: SignatureDocument
  try {
    parsed = JSON.parse(document.toString('utf8')) as SignatureDocument
  } catch {
    throw new SignatureError(`the signature of ${manifest} is not JSON`)
  }
  const ok =
    parsed.kind === 'signature' &&
    parsed.algorithm === 'ed25519' &&
    parsed.manifest === manifest &&
    typeof parsed.signature === 'string' &&
    verify(null, statement(manifest), key, Buffer.from(parsed.signature, 'base64'))
  if (!ok) throw new SignatureError(`image ${manifest} is not signed by the given key: refusing it`, { manifest })
}
