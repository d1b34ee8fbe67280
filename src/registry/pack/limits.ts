import type { FrameLimit } from '../../store/PackIndex.js'
import { type Limits, raiseHint } from '../../util/limits.js'

export { type Limits, DEFAULT_LIMITS, parseByteSize, raiseHint, resolveLimits } from '../../util/limits.js'

/** The frame size a pack index may declare: no more than an image may hold. */
export function frameLimit(limits: Limits): FrameLimit {
  return { max: limits.maxImageBytes, hint: raiseHint('maxImageBytes') }
}
