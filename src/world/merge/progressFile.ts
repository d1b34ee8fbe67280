import { CorruptDataError } from '../../errors/index.js'
import type { Store } from '../../store/Store.js'
import { atomicWrite } from '../../util/atomicWrite.js'
import { readTextOrNull } from '../../util/fsx.js'

/** Record work in progress in the workspace (a merge, a branch commit) in the store, durably. */
export async function writeProgressFile(store: Store, name: string, state: object): Promise<void> {
  await atomicWrite(store.path(name), JSON.stringify(state), { fsync: true })
}

/**
 * The work in progress recorded in `name`, or null when there is none.
 * @throws {CorruptDataError} `damaged` when the file does not parse or `valid` refuses it
 */
export async function readProgressFile<T>(store: Store, name: string, valid: (state: Partial<T>) => boolean, damaged: string): Promise<T | null> {
  const text = await readTextOrNull(store.path(name))
  if (text === null) return null
  let state: Partial<T> = {}
  try {
    state = (JSON.parse(text) as Partial<T> | null) ?? {}
  } catch {
    // damaged: refused below
  }
  if (!valid(state)) throw new CorruptDataError(damaged, { path: store.path(name) })
  return state as T
}
