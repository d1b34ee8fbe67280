import { InvalidPackError } from '../errors/index.js'
import { type Digest, isDigest } from '../store/digest.js'
import type { BlobRef } from './Descriptor.js'

/** The first entry of every pack: what it holds. */
export interface PackManifest {
  kind: 'pack'
  schemaVersion: 1
  root: Digest
  objects: BlobRef[]
}

export const PACK_MANIFEST_NAME = 'forkpoint-pack.json'
/** Object entries are named `objects/sha256/<hex>` and nothing else. */
export const PACK_OBJECT_RE = /^objects\/sha256\/([0-9a-f]{64})$/

export function parsePackManifest(bytes: Buffer): PackManifest {
  let m: PackManifest
  try {
    m = JSON.parse(bytes.toString('utf8')) as PackManifest
  } catch {
    throw new InvalidPackError(`${PACK_MANIFEST_NAME} is not JSON`)
  }
  const ok = m?.kind === 'pack' && isDigest(m.root) && Array.isArray(m.objects) && m.objects.every((o) => isDigest(o?.digest) && Number.isSafeInteger(o.size) && o.size >= 0)
  if (!ok) throw new InvalidPackError(`${PACK_MANIFEST_NAME} is malformed`)
  return m
}
