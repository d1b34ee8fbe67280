import { verifyLedger } from '../effects/verifyLedger.js'
import type { Digest } from '../objects/digest.js'
import type { Store } from '../store/Store.js'
import type { Snapshot } from '../objects/Snapshot.js'
import { readImage } from './readImage.js'

/**
 * An image about to be taken into another (merged, fast-forwarded, forked): each layer of
 * its kind, and its ledger whole (shape, chain, one result per key). A layer only it changed
 * is carried as it is, so this is where a hostile one is stopped (`env`: where FORKPOINT_KEY is read from).
 * @throws {MalformedObjectError} a layer of the wrong kind (exit 5) @throws {LedgerTamperedError} (exit 5)
 */
export async function incomingImage(store: Store, id: Digest, env: NodeJS.ProcessEnv): Promise<Snapshot> {
  const snapshot = await readImage(store, id)
  if (snapshot.effects !== undefined) await verifyLedger({ store, ledger: snapshot.effects, env })
  return snapshot
}
