import type { Digest } from '../objects/digest.js'
import { type MachineLayer, validateMachineLayer } from '../objects/MachineLayer.js'
import type { Store } from '../store/Store.js'

/** The machine layer object `digest` names (MalformedObjectError, exit 5, when it is something else). */
export async function readMachineLayer(store: Store, digest: Digest): Promise<MachineLayer> {
  return validateMachineLayer(await store.readObject(digest), `machine layer ${digest}`)
}
