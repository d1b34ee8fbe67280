import { z } from 'zod'
import { checkObject } from './checkObject.js'
import { DigestSchema } from './digestSchema.js'

/** The model layer: a directory of adapter or model files (safetensors, configs), as a tree. Its one edge is its tree (generic, edges.ts). */
export const ModelLayerSchema = z.object({ kind: z.literal('model'), schemaVersion: z.literal(1), tree: DigestSchema })
export type ModelLayer = z.infer<typeof ModelLayerSchema>

/** The parsed object as a model layer, unchanged; MalformedObjectError (exit 5) when it is not one. */
export function validateModelLayer(value: unknown, where: string): ModelLayer {
  return checkObject(ModelLayerSchema, value, where, 'model layer')
}
