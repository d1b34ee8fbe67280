import { type Digest, digestHex } from '../objects/digest.js'

/** An object's file in a store's `objects/sha256` directory (also for a thread that has no Store). */
export function objectPathIn(objectsDir: string, digest: Digest): string {
  const hex = digestHex(digest)
  return `${objectsDir}/${hex.slice(0, 2)}/${hex.slice(2)}`
}
