import { sha256 } from '../../src/objects/digest.js'

/** Two small blobs whose digests share their first 4 hex characters (found by brute force). */
export function collidingBlobs(): [string, string] {
  const seen = new Map<string, string>()
  for (let i = 0; ; i++) {
    const text = `blob ${i}`
    const prefix = sha256(text).slice('sha256:'.length, 'sha256:'.length + 4)
    const other = seen.get(prefix)
    if (other !== undefined) return [other, text]
    seen.set(prefix, text)
  }
}
