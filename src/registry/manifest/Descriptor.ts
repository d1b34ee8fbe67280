import type { Digest } from '../../objects/digest.js'
import { descriptorSchema, parseUntrusted } from './ociSchemas.js'

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

/** A descriptor from untrusted data, checked (a sha256 digest, a whole size, string annotations), or InvalidImageError (exit 5). */
export function assertDescriptor(value: unknown, where: string): Descriptor {
  return parseUntrusted(descriptorSchema, value, `${where}: the descriptor`)
}
