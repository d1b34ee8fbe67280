import type { FrameLimit } from '../store/PackIndex.js'
import { UsageError } from '../errors/index.js'

/**
 * Caps on every size read from untrusted data (layouts, registries, S3, pack files), so a
 * hostile remote or file cannot make forkpoint read or write without end. Each has a
 * default, an environment variable and a library option; see docs/untrusted-input.md.
 */
export interface Limits {
  /** One JSON document from a remote: an OCI manifest or index, a layout's `index.json`, a tag list, an error body. */
  maxManifestBytes: number
  /** A pack's `forkpoint-pack.json` (its object list). */
  maxPackManifestBytes: number
  /** One object of an image. */
  maxObjectBytes: number
  /** All objects of one image that are written to the store. */
  maxImageBytes: number
}

const MiB = 1024 ** 2
const GiB = 1024 ** 3

export const DEFAULT_LIMITS: Readonly<Limits> = {
  maxManifestBytes: 4 * MiB, // what docker-registry accepts
  maxPackManifestBytes: 64 * MiB, // about 600,000 objects
  maxObjectBytes: 4 * GiB,
  maxImageBytes: 64 * GiB,
}

const ENV: Record<keyof Limits, string> = {
  maxManifestBytes: 'FORKPOINT_MAX_MANIFEST_BYTES',
  maxPackManifestBytes: 'FORKPOINT_MAX_PACK_MANIFEST_BYTES',
  maxObjectBytes: 'FORKPOINT_MAX_OBJECT_BYTES',
  maxImageBytes: 'FORKPOINT_MAX_IMAGE_BYTES',
}

const UNITS: Record<string, number> = { '': 1, k: 1024, m: MiB, g: GiB, t: 1024 * GiB }

/** `123`, `64M`, `4G` (powers of 1024) -> bytes; UsageError for anything else. */
export function parseByteSize(text: string, what: string): number {
  const m = /^(\d+)\s*([kmgt]?)i?b?$/i.exec(text.trim())
  const bytes = m ? Number(m[1]) * UNITS[m[2]!.toLowerCase()]! : Number.NaN
  if (!Number.isSafeInteger(bytes) || bytes <= 0) throw new UsageError(`${what} must be a size in bytes like 4096, 64M or 4G, not ${JSON.stringify(text)}`, { value: text })
  return bytes
}

/** The limits in force: explicit options over environment variables over the defaults. */
export function resolveLimits(overrides: Partial<Limits> = {}, env: NodeJS.ProcessEnv = process.env): Limits {
  const limits = { ...DEFAULT_LIMITS }
  for (const key of Object.keys(ENV) as Array<keyof Limits>) {
    const fromEnv = env[ENV[key]]
    if (fromEnv !== undefined && fromEnv !== '') limits[key] = parseByteSize(fromEnv, ENV[key])
    const given = overrides[key]
    if (given !== undefined) limits[key] = given
  }
  return limits
}

/** How to raise a limit, for error messages. */
export function raiseHint(key: keyof Limits): string {
  return `set ${ENV[key]} to allow more`
}

/** The frame size a pack index may declare: no more than an image may hold. */
export function frameLimit(limits: Limits): FrameLimit {
  return { max: limits.maxImageBytes, hint: raiseHint('maxImageBytes') }
}
