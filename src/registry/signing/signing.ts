import { type KeyObject, createPublicKey, sign, verify } from 'node:crypto'
import { SignatureError } from '../../errors/index.js'
import { type Digest, sha256 } from '../../objects/digest.js'
import { canonicalBytes } from '../../util/canonicalJson.js'
import { type BlobRef, type Descriptor, assertDescriptor } from '../manifest/Descriptor.js'
import { type BuiltManifest, EMPTY_CONFIG } from '../manifest/imageManifest.js'
import { MediaType } from '../manifest/mediaTypes.js'
import { parseStrictJson } from '../../util/strictJson.js'

/**
 * What a signature names: the image's index and where it was pushed, the repository (the
 * remote as written, host and port included) and the tag, as cosign's payload names the
 * docker-reference. The same image re-tagged or moved elsewhere is not what was signed.
 */
export interface SignedImage {
  digest: Digest
  repository: string
  tag: string
}

/** The signature document, stored as a layer of a signature manifest. */
export interface SignatureDocument {
  kind: 'signature'
  schemaVersion: 2
  algorithm: 'ed25519'
  manifest: Digest
  repository: string
  tag: string
  publicKey: string
  signature: string
}

/** The most signatures kept beside one image (one per repository and tag it was signed for, per key), and read when verifying. */
export const MAX_SIGNATURES = 16

/** The largest signature document read. */
export const SIGNATURE_BYTES = 64 * 1024

/** The tag a signature of `manifest` lives under (the cosign-style fallback for registries without the referrers API). */
export function signatureTag(manifest: Digest): string {
  return `${manifest.replace(':', '-')}.sig`
}

/** What is signed: a domain-separated statement naming the image, its repository and its tag. */
function statement({ digest, repository, tag }: SignedImage): Buffer {
  return Buffer.concat([Buffer.from('forkpoint image signature v2\n'), canonicalBytes({ digest, repository, tag })])
}

/** A signature document of `image` by `key` (Ed25519 signatures are deterministic: the same image and key give the same bytes). */
export function signatureBlob(image: SignedImage, key: KeyObject): Buffer {
  const document: SignatureDocument = {
    kind: 'signature',
    schemaVersion: 2,
    algorithm: 'ed25519',
    manifest: image.digest,
    repository: image.repository,
    tag: image.tag,
    publicKey: createPublicKey(key).export({ type: 'spki', format: 'der' }).toString('base64'),
    signature: sign(null, statement(image), key).toString('base64'),
  }
  return canonicalBytes(document)
}

/** The manifest holding an image's signature documents as layers, with the signed index as its subject. */
export function signatureManifest(index: Descriptor, layers: BlobRef[]): BuiltManifest {
  const bytes = canonicalBytes({
    schemaVersion: 2,
    mediaType: MediaType.manifest,
    artifactType: MediaType.signature,
    config: EMPTY_CONFIG.descriptor,
    layers: layers.map(({ digest, size }) => ({ mediaType: MediaType.signatureLayer, digest, size })),
    subject: { mediaType: index.mediaType, digest: index.digest, size: index.size },
  })
  return { descriptor: { mediaType: MediaType.manifest, digest: sha256(bytes), size: bytes.length, artifactType: MediaType.signature }, bytes }
}

/** The signature documents a signature manifest names (the last MAX_SIGNATURES), each descriptor checked. */
export function signatureLayers(manifest: Buffer): BlobRef[] {
  let parsed: { artifactType?: unknown; layers?: unknown }
  try {
    parsed = parseStrictJson(manifest) as typeof parsed
  } catch {
    throw new SignatureError('the signature manifest is not JSON')
  }
  if (parsed?.artifactType !== MediaType.signature || !Array.isArray(parsed.layers) || parsed.layers.length === 0) throw new SignatureError('the signature manifest is malformed')
  return parsed.layers.slice(-MAX_SIGNATURES).map((l, i) => {
    const { digest, size } = assertDescriptor(l, `signature layer ${i}`)
    return { digest, size }
  })
}

/** Whether `document` is a valid signature by `key` of exactly `image` (a null tag: any tag, for a pull by digest, which pins the image itself). */
export function signs(document: Buffer, image: Omit<SignedImage, 'tag'> & { tag: string | null }, key: KeyObject): boolean {
  let parsed: Partial<SignatureDocument>
  try {
    parsed = JSON.parse(document.toString('utf8')) as Partial<SignatureDocument>
  } catch {
    return false
  }
  const named = { digest: image.digest, repository: image.repository, tag: image.tag ?? parsed?.tag }
  return (
    parsed?.kind === 'signature' &&
    parsed.schemaVersion === 2 &&
    parsed.algorithm === 'ed25519' &&
    parsed.manifest === named.digest &&
    parsed.repository === named.repository &&
    typeof named.tag === 'string' &&
    parsed.tag === named.tag &&
    typeof parsed.signature === 'string' &&
    verify(null, statement(named as SignedImage), key, Buffer.from(parsed.signature, 'base64'))
  )
}
