import { assertStoreNotLinked, statStoreEntry } from './statStoreEntry.js'
import { dirname, join, resolve } from 'node:path'
import type { Store } from './Store.js'

// Without the store's code: the Claude Code hook's client (src/cli/hookMain.ts) finds the store's service with it.

export const STORE_DIR_NAME = '.forkpoint'

/**
 * How every public call names its store: the one locator of the API.
 * @example
 * await status({ dir: 'project' })                        // the store found from project/ up
 * await status({ dir: 'project', store: '/srv/store' })  // that store, for the workspace project/
 */
export interface StoreLocator {
  /** The workspace directory (default: the current directory). */
  dir?: string | undefined
  /**
   * The store: its directory, or a `Store` already open (default: the nearest `.forkpoint/`
   * found walking up from `dir`, like git; the CLI's default is `$FORKPOINT_STORE` first).
   */
  store?: string | Store | undefined
}

export interface StoreLocation {
  /** The store directory. */
  storeDir: string
  /** The workspace it serves: the directory holding a found `.forkpoint/`, else `dir`. */
  workspace: string
}

/** Where the store a locator names is; null when none is named and none is found. */
export function locateStore({ dir = process.cwd(), store }: StoreLocator = {}): StoreLocation | null {
  if (store !== undefined) return { storeDir: typeof store === 'string' ? resolve(dir, store) : store.root, workspace: resolve(dir) }
  for (let at = resolve(dir); ; at = dirname(at)) {
    const candidate = join(at, STORE_DIR_NAME)
    const st = statStoreEntry(join(candidate, 'HEAD'))
    if (st?.isFile()) {
      assertStoreNotLinked(candidate)
      return { storeDir: candidate, workspace: at }
    }
    if (dirname(at) === at) return null
  }
}
