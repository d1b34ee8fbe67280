import { statSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { StoreNotFoundError } from '../errors/index.js'
import { Store } from './Store.js'

export const STORE_DIR_NAME = '.forkpoint'

export interface StoreLocation {
  /** The store directory. */
  storeDir: string
  /** The workspace it belongs to: the directory holding `.forkpoint/`, or `cwd` for a store elsewhere. */
  workspace: string
}

/**
 * Where the store is: `store` (flag) or FORKPOINT_STORE when given, else the nearest
 * `.forkpoint/` found walking up from `cwd`, like git. Null when none exists.
 */
export async function locateStore({ cwd = process.cwd(), store = process.env['FORKPOINT_STORE'] }: { cwd?: string; store?: string | undefined } = {}): Promise<StoreLocation | null> {
  if (store) {
    const storeDir = resolve(cwd, store)
    return { storeDir, workspace: basename(storeDir) === STORE_DIR_NAME ? dirname(storeDir) : resolve(cwd) }
  }
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const candidate = join(dir, STORE_DIR_NAME)
    const st = statSync(join(candidate, 'HEAD'), { throwIfNoEntry: false })
    if (st?.isFile()) return { storeDir: candidate, workspace: dir }
    if (dirname(dir) === dir) return null
  }
}

/** Open the store for `cwd` (or the explicit one); StoreNotFoundError when there is none. */
export async function openStore(args: { cwd?: string; store?: string | undefined } = {}): Promise<{ store: Store; workspace: string }> {
  const location = await locateStore(args)
  if (!location) {
    throw new StoreNotFoundError(`no forkpoint store in ${resolve(args.cwd ?? '.')} or any parent (run 'forkpoint init')`)
  }
  return { store: await Store.open(location.storeDir), workspace: location.workspace }
}
