import { InvalidImageError } from '../errors/index.js'
import { type Digest, isDigest } from '../store/digest.js'

/** An OCI content descriptor: what a manifest says about a blob. */
export interface Descriptor {
  mediaType: string
  digest: Digest
  size: number
  artifactType?: string
  annotations?: Record<string, string>
}

/** A blob named by digest with the size the sender claims for it. */
export interface BlobRef {
  digest: Digest
  size: number
}

export function assertDescriptor(value: unknown, where: string): Descriptor {
  const d = value as Descriptor
  if (typeof d?.mediaType !== 'string' || !isDigest(d.digest) || !Number.isSafeInteger(d.size) || d.size < 0) {
    throw new InvalidImageError(`${where}: malformed descriptor`, { descriptor: value as object })
  }
  return d
}
