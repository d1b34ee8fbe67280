import { z } from 'zod'
import { InvalidImageError } from '../../errors/index.js'
import { type Digest, isDigest } from '../../objects/digest.js'

/** `sha256:<64 lowercase hex>`: the only digest that may name a blob, checked before it becomes a path or a key. */
export const digestSchema = z.custom<Digest>(isDigest, { message: 'not a sha256:<64 lowercase hex> digest' })

/** OCI annotations: strings to strings. */
export const annotationsSchema = z.record(z.string(), z.string())

/** An OCI content descriptor; fields it does not name (platform, urls, …) are kept. */
export const descriptorSchema = z.looseObject({
  mediaType: z.string(),
  digest: digestSchema,
  size: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  artifactType: z.string().optional(),
  annotations: annotationsSchema.optional(),
})

/** A layout's `index.json`: its manifests, each a descriptor. */
export const layoutIndexSchema = z.looseObject({
  schemaVersion: z.number().optional(),
  mediaType: z.string().optional(),
  manifests: z.array(descriptorSchema),
})

/** `value` as `schema` describes it, or InvalidImageError (exit 5) naming where in `what` it is not. */
export function parseUntrusted<T>(schema: z.ZodType<T>, value: unknown, what: string, data: Record<string, string> = {}): T {
  const parsed = schema.safeParse(value)
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0]!
  const at = issue.path.length > 0 ? ` at ${issue.path.map(String).join('.')}` : ''
  throw new InvalidImageError(`${what} is malformed${at}: ${issue.message}`, data)
}
