import { z } from 'zod'
import { type Digest, isDigest } from './digest.js'

/** A digest in a schema (digest.ts itself stays free of zod: hashing workers load it). */
export const DigestSchema = z.custom<Digest>(isDigest, 'not a digest')
