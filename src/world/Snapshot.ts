import { MalformedObjectError } from '../errors/index.js'
import { type Digest, isDigest } from '../store/digest.js'

/**
 * The agent image: the workspace tree plus optional layers that higher layers fill
 * (trace, effects, checkpoints, model, cache, machine), each a digest of its own object. Unknown
 * fields from newer writers are kept as they are.
 */
export interface Snapshot {
  kind: 'snapshot'
  schemaVersion: 1
  parents: Digest[]
  world: { tree: Digest; env?: Record<string, string> }
  trace?: Digest
  effects?: Digest
  /** An agent framework's checkpoints (a LangGraph thread's): the head of a `checkpoint-log`. */
  checkpoints?: Digest
  model?: Digest
  cache?: Digest
  machine?: Digest
  /** `fork`: set on the children `forkImage` makes, which child of which image. */
  meta: { agent?: string; message: string; createdAt: string; fork?: { of: Digest; index: number } }
  [unknown: string]: unknown
}

export const SNAPSHOT_LAYERS = ['trace', 'effects', 'checkpoints', 'model', 'cache', 'machine'] as const
export type SnapshotLayer = (typeof SNAPSHOT_LAYERS)[number]

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

export function validateSnapshot(value: unknown, where: string): Snapshot {
  const s = value as Snapshot
  const ok =
    s?.kind === 'snapshot' &&
    Array.isArray(s.parents) &&
    s.parents.every(isDigest) &&
    isDigest(s.world?.tree) &&
    typeof s.meta?.message === 'string' &&
    typeof s.meta?.createdAt === 'string' &&
    SNAPSHOT_LAYERS.every((layer) => s[layer] === undefined || isDigest(s[layer]))
  if (!ok) throw new MalformedObjectError(`${where} is not a valid snapshot`)
  return s
}
