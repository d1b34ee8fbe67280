import { z } from 'zod'
import { checkObject } from './checkObject.js'
import { type Digest, isDigest } from './digest.js'
import { DigestSchema } from './digestSchema.js'
import type { EdgeRule } from './edges.js'
import type { StructuredObject } from './StructuredObject.js'

export const SNAPSHOT_LAYERS = ['trace', 'effects', 'checkpoints', 'model', 'cache', 'machine'] as const
export type SnapshotLayer = (typeof SNAPSHOT_LAYERS)[number]

/**
 * The agent image: the workspace tree plus optional layers that higher layers fill
 * (trace, effects, checkpoints, model, cache, machine), each a digest of its own object.
 * Unknown fields from newer writers are kept as they are (a loose object).
 */
export const SnapshotSchema = z.looseObject({
  kind: z.literal('snapshot'),
  schemaVersion: z.literal(1),
  parents: z.array(DigestSchema),
  world: z.looseObject({ tree: DigestSchema, env: z.record(z.string(), z.string()).optional() }),
  trace: DigestSchema.optional(),
  effects: DigestSchema.optional(),
  /** An agent framework's checkpoints (a LangGraph thread's): the head of a `checkpoint-log`. */
  checkpoints: DigestSchema.optional(),
  model: DigestSchema.optional(),
  cache: DigestSchema.optional(),
  machine: DigestSchema.optional(),
  meta: z.looseObject({
    agent: z.string().optional(),
    message: z.string(),
    createdAt: z.string(),
    /** `fork`: set on the children `forkImage` makes, which child of which image. */
    fork: z.object({ of: DigestSchema, index: z.number().int().nonnegative() }).optional(),
  }),
})

export type Snapshot = z.infer<typeof SnapshotSchema>

/** A snapshot names its parents, its tree and its layers; its message, agent and env are its users' text. */
export const SNAPSHOT_EDGES: EdgeRule = { skip: new Set(['message', 'agent', 'env']) }

export function makeSnapshot(args: {
  parents: Digest[]
  tree: Digest
  message: string
  agent?: string | undefined
  createdAt?: Date
  env?: Record<string, string>
  layers?: Partial<Record<SnapshotLayer, Digest>>
}): Snapshot {
  const meta: Snapshot['meta'] = { message: args.message, createdAt: (args.createdAt ?? new Date()).toISOString() }
  if (args.agent) meta.agent = args.agent
  const world: Snapshot['world'] = { tree: args.tree }
  if (args.env && Object.keys(args.env).length > 0) world.env = args.env
  return { kind: 'snapshot', schemaVersion: 1, parents: args.parents, world, ...args.layers, meta }
}

/** The parsed object as a snapshot, unchanged; MalformedObjectError (exit 5) when it is not one. */
export function validateSnapshot(value: unknown, where: string): Snapshot {
  return checkObject(SnapshotSchema, value, where, 'snapshot')
}

/** The parents a structured object names when it is a snapshot (a walk follows a shallow image's where present, never missing); none for another kind. */
export function snapshotParents(object: StructuredObject): Set<Digest> {
  const parents = object['parents']
  return new Set(object.kind === 'snapshot' && Array.isArray(parents) ? parents.filter(isDigest) : [])
}
