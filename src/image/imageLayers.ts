import { type Digest, isDigest } from '../objects/digest.js'
import { SNAPSHOT_LAYERS, type Snapshot } from '../objects/Snapshot.js'

/** Every layer of an image besides world and trace: the known slots, then any digest-valued field a newer writer added (carried, never dropped). */
export function otherLayers(snapshot: Snapshot): Array<{ layer: string; id: Digest }> {
  const known = SNAPSHOT_LAYERS.filter((l) => l !== 'trace' && snapshot[l] !== undefined).map((layer) => ({ layer, id: snapshot[layer]! }))
  const skip = new Set<string>(['kind', 'schemaVersion', 'parents', 'world', 'meta', ...SNAPSHOT_LAYERS])
  const unknown = Object.entries(snapshot)
    .filter(([field, value]) => !skip.has(field) && isDigest(value))
    .map(([layer, id]) => ({ layer, id: id as Digest }))
  return [...known, ...unknown]
}

/** Every layer of an image: the world (its tree), the trace, then the others. */
export function allLayers(snapshot: Snapshot): Array<{ layer: string; id: Digest }> {
  return [{ layer: 'world', id: snapshot.world.tree }, ...(snapshot.trace ? [{ layer: 'trace', id: snapshot.trace }] : []), ...otherLayers(snapshot)]
}
