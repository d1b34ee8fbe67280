import type { z } from 'zod'
import { CorruptDataError } from '../../errors/index.js'
import type { Store } from '../../store/Store.js'
import { atomicWrite } from '../../util/atomicWrite.js'
import { readStateTextOrNull } from '../../store/readStateFile.js'
import { parseJsonOrNull } from '../../util/parseJsonOrNull.js'

/** Record work in progress in the workspace (a merge, a branch commit) in the store, durably. */
export async function writeProgressFile(store: Store, name: string, state: object): Promise<void> {
  await atomicWrite(store.path(name), JSON.stringify(state), { fsync: true })
}

/**
 * The work in progress recorded in `name`, or null when there is none. The file is data like any other in the
 * store (a cloned repository may carry one): every path it names is checked by `schema` before anything acts on it.
 * @throws {CorruptDataError} `damaged` when the file does not parse or `schema` refuses it
 */
export async function readProgressFile<T>(store: Store, name: string, schema: z.ZodType<T>, damaged: string): Promise<T | null> {
  const text = readStateTextOrNull(store.path(name))
  if (text === null) return null
  const parsed = schema.safeParse(parseJsonOrNull(text))
  if (!parsed.success) throw new CorruptDataError(damaged, { path: store.path(name) })
  return parsed.data
}
