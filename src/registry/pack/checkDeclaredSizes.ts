import { InvalidImageError } from '../../errors/index.js'
import type { BlobRef } from '../manifest/Descriptor.js'
import { type Limits, raiseHint } from './limits.js'

/** Refuse, before a byte is written, objects an untrusted image declares larger than the limits allow. */
export function checkDeclaredSizes(objects: Iterable<BlobRef>, limits: Limits, source: string): void {
  let total = 0
  for (const o of objects) {
    if (o.size > limits.maxObjectBytes) {
      throw new InvalidImageError(
        `${source} declares object ${o.digest} of ${o.size} bytes, more than the limit of ${limits.maxObjectBytes}: refusing it (${raiseHint('maxObjectBytes')})`,
        { digest: o.digest, size: o.size, max: limits.maxObjectBytes },
      )
    }
    total += o.size
  }
  if (total > limits.maxImageBytes) {
    throw new InvalidImageError(`${source} declares ${total} bytes of objects, more than the limit of ${limits.maxImageBytes}: refusing it (${raiseHint('maxImageBytes')})`, {
      total,
      max: limits.maxImageBytes,
    })
  }
}
