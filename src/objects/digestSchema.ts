import { z } from 'zod'

/**
 * A digest in a schema: `sha256:` and 64 lowercase hex digits, typed as `Digest`, and in
 * JSON Schema a string with that pattern (digest.ts itself stays free of zod: hashing
 * workers load it).
 */
export const DigestSchema = z.templateLiteral(['sha256:', z.string().regex(/^[0-9a-f]{64}$/)])
