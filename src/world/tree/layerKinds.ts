import { MalformedObjectError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import type { Snapshot, SnapshotLayer } from '../../objects/Snapshot.js'

/** The kind of object each layer must point at. */
export const LAYER_KINDS: Record<SnapshotLayer, string> = { trace: 'run', effects: 'ledger', checkpoints: 'checkpoint-log', model: 'model', cache: 'kv-cache', machine: 'machine' }

/** The kind of the object a digest names: a structured object's `kind`, `'blob'` for raw bytes, null when it is nowhere. */
export type KindOf = (digest: Digest) => Promise<string | null> | string | null

/**
 * The one check that every layer of an image points at an object of its kind (a trace at
 * a `run`, effects at a `ledger`). Every place that reads an image for use calls it:
 * `show`, `checkoutAgent`, `snapshot --effects`, and the registry's check of an incoming image.
 * MalformedObjectError (exit 5) naming the layer, the object and what it is.
 */
export async function assertLayerKinds(snapshot: Snapshot, where: string, kindOf: KindOf): Promise<void> {
  for (const [layer, kind] of Object.entries(LAYER_KINDS) as Array<[SnapshotLayer, string]>) {
    const digest = snapshot[layer]
    if (digest === undefined) continue
    const actual = await kindOf(digest)
    if (actual !== kind) {
      throw new MalformedObjectError(`${where}: its ${layer} layer ${digest} must be a ${kind} object, but it is ${actual === null ? 'missing' : `a ${actual}`}`, {
        layer,
        digest,
        expected: kind,
        actual,
      })
    }
  }
}
