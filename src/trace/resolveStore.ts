import { openStore } from '../store/findStore.js'
import type { Store } from '../store/Store.js'

/** Where a trace operation keeps runs: an open Store, an explicit store directory, or the store found from `cwd`. */
export interface StoreChoice {
  store?: Store | undefined
  storeDir?: string | undefined
  cwd?: string | undefined
}

export async function resolveStore({ store, storeDir, cwd = process.cwd() }: StoreChoice): Promise<Store> {
  return store ?? (await openStore({ cwd, store: storeDir })).store
}
