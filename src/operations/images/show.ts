import { z } from 'zod'
import { defineOperation } from '../operation.js'
import { digest, forkOrigin, jsonValue, snapshotId, treeListing } from '../schemas.js'

const snapshotMeta = z.object({
  agent: z.string().optional(),
  message: z.string(),
  createdAt: z.string(),
  fork: forkOrigin.optional().describe('set on the children fork made: which child of which image'),
})

/** The snapshot object as stored; loose as the type is: fields of newer writers are kept as they are. */
const snapshotObject = z
  .object({
    kind: z.literal('snapshot'),
    schemaVersion: z.literal(1),
    parents: z.array(digest),
    world: z.object({ tree: digest, env: z.record(z.string(), z.string()).optional() }),
    trace: digest.optional(),
    effects: digest.optional(),
    checkpoints: digest.optional(),
    model: digest.optional(),
    cache: digest.optional(),
    machine: digest.optional(),
    meta: snapshotMeta,
  })
  .loose()

const imageDescription = z.object({
  id: digest,
  kind: z.literal('snapshot'),
  parents: z.array(digest),
  meta: snapshotMeta,
  world: z.object({ tree: digest, files: z.number(), bytes: z.number(), env: z.record(z.string(), z.string()).nullable() }),
  trace: z
    .object({
      id: digest,
      runId: z.string(),
      entrypoint: z.string(),
      status: z.string(),
      steps: z.array(z.object({ idx: z.number(), name: z.string(), type: z.string() })),
      // a chat transcript's messages as the agent's API carried them
      messages: z.array(jsonValue).nullable().describe('the trace as messages when it came from a chat transcript'),
    })
    .nullable(),
  layers: z.array(z.object({ layer: z.string(), id: digest, kind: z.string().nullable().describe("the layer object's kind, null when the store lacks it") })),
  object: snapshotObject,
})

/** Any other structured object, shown as stored: every kind has fields of its own. */
const storedObject = z.object({ id: digest, kind: z.string(), size: z.number(), object: z.object({ kind: z.string(), schemaVersion: z.number() }).loose() })

const blob = z.object({ id: digest, kind: z.literal('blob'), size: z.number(), text: z.string().nullable().describe('null when binary, not UTF-8 or over 1 MiB') })

const fileOfImage = z.object({
  kind: z.enum(['file', 'symlink']),
  id: digest,
  path: z.string(),
  mode: z.number(),
  size: z.number(),
  content: digest.nullable().describe("the blob or chunks object holding a file's bytes; null for a symlink"),
  chunked: z.boolean(),
  target: z.string().optional(),
  text: z.string().nullable().describe("the content as text (a symlink's: its target), null when binary, not UTF-8 or over 1 MiB"),
})

const dirOfImage = treeListing.extend({ kind: z.literal('dir') })

export const show = defineOperation({
  name: 'show',
  description: 'An image layer by layer; ID:PATH a file (with its text when short UTF-8) or a directory of an image; a blob with its text; any other object.',
  input: { id: snapshotId.describe('a snapshot or object id, or ID:PATH for a path of an image') },
  output: z.union([imageDescription, blob, fileOfImage, dirOfImage, storedObject]),
  annotations: { readOnly: true, destructive: false, idempotent: true },
  cli: { own: 'show', why: "the command line writes a file's or blob's bytes as they are stored" },
  async run(where, { id }) {
    const { showSpec } = await import('../../image/showSpec.js')
    return showSpec({ ...where, id })
  },
})
