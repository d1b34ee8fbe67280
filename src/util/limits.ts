import { UsageError } from '../errors/index.js'

/**
 * The budget of what one untrusted input (a layout, a registry, an S3 prefix, a pack file,
 * an image pulled into the store) may cost, so that a hostile one cannot make forkpoint
 * read, write or walk without end. Each cap has a default, an environment variable and a
 * library option (`limits`); see docs/untrusted-input.md.
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
  /** Bytes of regular files one checkout of an image's tree writes (declared sizes, through shared subtrees and chunk lists). */
  maxCheckoutBytes: number
  /** Paths (files, directories, symlinks) one checkout of an image's tree creates. */
  maxCheckoutPaths: number
  /**
   * How many times the distinct content (bytes, tree entries) it holds a tree may expand
   * to when checked out, past `EXPANSION_FLOOR`: a chunk list naming one blob 2,048 times,
   * or 26 trees each naming the one below twice, expand thousands of times.
   */
  maxExpansion: number
}

const MiB = 1024 ** 2
const GiB = 1024 ** 3

export const DEFAULT_LIMITS: Readonly<Limits> = {
  maxManifestBytes: 4 * MiB, // what docker-registry accepts
  maxPackManifestBytes: 64 * MiB, // about 600,000 objects
  maxObjectBytes: 4 * GiB,
  maxImageBytes: 64 * GiB,
  maxCheckoutBytes: 64 * GiB,
  maxCheckoutPaths: 10_000_000,
  maxExpansion: 64,
}

/** What any tree may check out to whatever its expansion: small trees of copies (test fixtures, vendored duplicates) are common and cheap. */
export const EXPANSION_FLOOR = { bytes: 256 * MiB, paths: 65_536 } as const

const ENV: Record<keyof Limits, string> = {
  maxManifestBytes: 'FORKPOINT_MAX_MANIFEST_BYTES',
  maxPackManifestBytes: 'FORKPOINT_MAX_PACK_MANIFEST_BYTES',
  maxObjectBytes: 'FORKPOINT_MAX_OBJECT_BYTES',
  maxImageBytes: 'FORKPOINT_MAX_IMAGE_BYTES',
  maxCheckoutBytes: 'FORKPOINT_MAX_CHECKOUT_BYTES',
  maxCheckoutPaths: 'FORKPOINT_MAX_CHECKOUT_PATHS',
  maxExpansion: 'FORKPOINT_MAX_EXPANSION',
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

/** How to raise a limit, for error messages: the environment variable and the library option. */
export function raiseHint(key: keyof Limits): string {
  return `set ${ENV[key]} (option limits.${key}) to allow more`
}
