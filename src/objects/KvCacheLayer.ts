import { z } from 'zod'
import { checkObject } from './checkObject.js'
import { DigestSchema } from './digestSchema.js'

/** A context larger than this in a cache layer is refused before llama.cpp is asked to allocate it. */
export const MAX_CONTEXT = 1 << 20

const TokensSchema = z.array(z.int().nonnegative())

/**
 * The cache layer: one sequence's KV-cache as llama.cpp saves it, with what it needs to
 * be used again safely: the model it was made with (loading a state into another model
 * can crash the process, so a restore refuses one), the tokens it holds, and the tokens
 * to evaluate before the next one is sampled (a state holds no logits). Its one edge is
 * its state (generic, edges.ts).
 */
export const KvCacheLayerSchema = z
  .object({
    kind: z.literal('kv-cache'),
    schemaVersion: z.literal(1),
    /** The GGUF model file's sha256, as hex: not a `sha256:` digest, which would name an object of the store (the model is not one). */
    modelSha256: z.string().regex(/^[0-9a-f]{64}$/),
    contextSize: z.int().positive().max(MAX_CONTEXT),
    tokens: TokensSchema,
    pending: TokensSchema.min(1),
    /** The state file, as a `chunks` object of content-defined pieces. */
    state: DigestSchema,
  })
  .refine((layer) => layer.contextSize >= layer.tokens.length + layer.pending.length, { message: 'its tokens do not fit its context', path: ['contextSize'] })
export type KvCacheLayer = z.infer<typeof KvCacheLayerSchema>

/** The parsed object as a cache layer, unchanged; MalformedObjectError (exit 5) when it is not one. */
export function validateKvCacheLayer(value: unknown, where: string): KvCacheLayer {
  return checkObject(KvCacheLayerSchema, value, where, 'kv-cache layer')
}
