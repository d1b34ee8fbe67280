import type { KeyObject } from 'node:crypto'
import { SignatureError } from '../../errors/index.js'
import { sha256 } from '../../objects/digest.js'
import { readCapped } from '../transport/readCapped.js'
import { SIGNATURE_BYTES, type SignedImage, signatureLayers, signatureTag, signs } from './signing.js'
import type { Transport } from '../transport/Transport.js'

/**
 * Throw SignatureError (exit 5) unless one of the signatures kept beside the image is a
 * valid signature by `key` of this image in this repository under this tag (any tag when
 * `tag` is null: a pull by digest). A signature made for another tag or repository (the
 * image re-tagged, or copied elsewhere) does not count.
 */
export async function verifyImageSignature(transport: Transport, image: Omit<SignedImage, 'tag'> & { tag: string | null }, key: KeyObject): Promise<void> {
  const { digest } = image
  const signature = await transport.getManifest(signatureTag(digest))
  if (signature === null) throw new SignatureError(`image ${digest} in ${transport.location} is not signed: refusing it`, { manifest: digest })
  for (const layer of signatureLayers(signature.bytes)) {
    const stream = await transport.openBlob(layer.digest, 0)
    const document = await readCapped(stream?.body ?? null, SIGNATURE_BYTES, 'signature')
    if (sha256(document) !== layer.digest) throw new SignatureError(`a signature blob of ${digest} is missing or corrupt: refusing the image`, { manifest: digest })
    if (signs(document, image, key)) return
  }
  const as = image.tag === null ? image.repository : `${image.repository}:${image.tag}`
  throw new SignatureError(`image ${digest} is not signed by the given key as ${as}: refusing it`, { manifest: digest })
}
