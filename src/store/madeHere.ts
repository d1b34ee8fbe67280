import { readMarkedStateOrNull } from './readStateFile.js'
import type { Store } from './Store.js'
import { writeMarkedState } from './writtenHere.js'

/** The file that says the store was made where it is (`writtenHere.ts`): its mark does not survive a clone or a copy. */
const MADE_HERE = 'made-here.json'

/** Record that the store at `root` is made here, now (only `Store.init` of a new store calls this). */
export async function markStoreMadeHere(root: string): Promise<void> {
  await writeMarkedState(`${root}/${MADE_HERE}`, { kind: 'made-here', schemaVersion: 1 })
}

/**
 * Whether the store was made where it is: false for a store a cloned repository carries in `.forkpoint/`, or a copy,
 * whose images and history are then all from elsewhere (`cameFromElsewhere`), however its `foreign` file reads.
 */
export function storeMadeHere(store: Store): boolean {
  const value = readMarkedStateOrNull(store.path(MADE_HERE))?.value
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'made-here'
}
