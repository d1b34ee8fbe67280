import { z } from 'zod'
import type { StoreLocator } from '../../store/findStore.js'
import { looksBinary } from '../../world/diff/looksBinary.js'
import { quotePath } from '../../world/diff/quotePath.js'
import { defineOperation } from '../operation.js'
import type { ByteSink } from '../rendering.js'
import { formatBytes } from '../text/format.js'
import { renderImage } from '../text/renderImage.js'
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

const shown = z.union([imageDescription, blob, fileOfImage, dirOfImage, storedObject])
type Shown = z.infer<typeof shown>
type BytesOf = Pick<z.infer<typeof fileOfImage>, 'kind' | 'content' | 'chunked' | 'target'>

export const show = defineOperation({
  name: 'show',
  description: 'An image layer by layer; ID:PATH a file (with its text when short UTF-8) or a directory of an image; a blob with its text; any other object.',
  input: { id: snapshotId.describe('a snapshot or object id, or ID:PATH for a path of an image') },
  output: shown,
  annotations: { readOnly: true, destructive: false, idempotent: true },
  cli: {
    usage: 'show <id>',
    rendering: {
      human(r) {
        if (r.kind === 'snapshot' && 'world' in r) return renderImage(r)
        if ('total' in r) {
          const names = r.entries.map((e) => `${quotePath(e.name)}${e.type === 'dir' ? '/' : ''}`)
          return [...names, ...(r.total > r.entries.length ? [`… and ${r.total - r.entries.length} more`] : [])].join('\n')
        }
        if ('chunked' in r) return `${r.kind} ${quotePath(r.path)} of ${r.id} (${formatBytes(r.size)}, mode ${r.mode.toString(8)})`
        return 'object' in r ? `${r.kind} ${r.id}\n${JSON.stringify(r.object, null, 2)}` : `blob ${r.id} (${formatBytes(r.size)})`
      },
      notes: (r) => (bytesOf(r) ? ['binary content is not written to a terminal: redirect stdout to get its bytes'] : []),
    },
    bytes: {
      async after(where, result, out) {
        const file = bytesOf(result)
        return file && (await writeContent(where, file, out)) ? 0 : null
      },
    },
  },
  async run(where, { id }) {
    const { showSpec } = await import('../../image/showSpec.js')
    return showSpec({ ...where, id })
  },
})

/** What holds bytes to print as they are: a blob, a file or a symlink of an image. */
function bytesOf(r: Shown): BytesOf | null {
  if ('chunked' in r) return r
  return r.kind === 'blob' && !('object' in r) ? { kind: 'file', content: r.id, chunked: false } : null
}

/** A blob's or file's bytes as stored, piece by piece; false (nothing written) when they are binary and go to a terminal. */
async function writeContent(where: StoreLocator, file: BytesOf, out: ByteSink): Promise<boolean> {
  const { fileContent } = await import('../../world/diff/showPath.js')
  let first = true
  for await (const piece of fileContent({ ...where, file })) {
    if (first && out.terminal && looksBinary(piece)) return false
    first = false
    await out.write(piece)
  }
  return true
}
