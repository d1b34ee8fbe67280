import { CHECKPOINT_LOG_EDGES } from './CheckpointLog.js'
import type { Digest } from './digest.js'
import { digestsIn, type EdgeRule } from './edges.js'
import { LEDGER_EDGES } from './Ledger.js'
import { MACHINE_IMAGE_EDGES } from './MachineImage.js'
import { MACHINE_LAYER_EDGES } from './MachineLayer.js'
import { RUN_EDGES } from './Run.js'
import { SNAPSHOT_EDGES } from './Snapshot.js'
import { TREE_EDGES } from './Tree.js'

/** The kinds whose edges are not every digest-shaped string in them (edges.ts), by `kind`. */
const EDGE_RULES: ReadonlyMap<string, EdgeRule> = new Map([
  ['run', RUN_EDGES],
  ['tree', TREE_EDGES],
  ['ledger', LEDGER_EDGES],
  ['checkpoint-log', CHECKPOINT_LOG_EDGES],
  ['snapshot', SNAPSHOT_EDGES],
  ['machine', MACHINE_LAYER_EDGES],
  ['machine-image', MACHINE_IMAGE_EDGES],
])

/** Edges found, by parsed object: a pull's check and its commit both ask for every tree's (parsed objects are never changed). */
const edgesFound = new WeakMap<object, readonly Digest[]>()

/** The edges of the object graph: the digests a structured object names, by its kind's rule. */
export function objectEdges(object: { kind?: unknown }): readonly Digest[] {
  let edges = edgesFound.get(object)
  if (edges === undefined) {
    edges = digestsIn(object, typeof object.kind === 'string' ? EDGE_RULES.get(object.kind) : undefined, true, [])
    edgesFound.set(object, edges)
  }
  return edges
}
