import { resolve } from 'node:path'
import { StoreNotFoundError } from '../errors/index.js'
import { Store } from './Store.js'
import { type StoreLocator, locateStore } from './locateStore.js'

export { STORE_DIR_NAME, type StoreLocation, type StoreLocator, locateStore } from './locateStore.js'

/** Open the store a locator names, and the workspace it serves. @throws {StoreNotFoundError} */
export async function openStore(locator: StoreLocator = {}): Promise<{ store: Store; workspace: string }> {
  const location = locateStore(locator)
  if (!location) {
    throw new StoreNotFoundError(`no forkpoint store in ${resolve(locator.dir ?? '.')} or any parent (run 'forkpoint init')`, { dir: resolve(locator.dir ?? '.') })
  }
  const store = locator.store instanceof Store ? locator.store : await Store.open(location.storeDir)
  return { store, workspace: location.workspace }
}
