import type { z } from 'zod'
import { CorruptDataError } from '../../errors/index.js'
import type { Store } from '../../store/Store.js'
import { readMarkedStateOrNull } from '../../store/readStateFile.js'
import { NOT_WRITTEN_HERE, writeMarkedState } from '../../store/writtenHere.js'

/** Record work in progress in the workspace (a merge, a branch commit) in the store, durably. */
export async function writeProgressFile(store: Store, name: string, state: object): Promise<void> {
  await writeMarkedState(store.path(name), state, { fsync: true })
}

/**
 * The work in progress recorded in `name`, or null when there is none. The file is data like any other in the
 * store (a cloned repository may carry one): it is acted on only when it is the file written here (`writtenHere.ts`),
 * and every path it names is checked by `schema` first.
 * @throws {CorruptDataError} `damaged` when the file does not parse, was not written here, or `schema` refuses it
 */
export async function readProgressFile<T>(store: Store, name: string, schema: z.ZodType<T>, damaged: string): Promise<T | null> {
  const path = store.path(name)
  const file = readMarkedStateOrNull(path)
  if (file === null) return null
  if (file.value === null) throw new CorruptDataError(`${damaged} (${NOT_WRITTEN_HERE}, or it does not parse)`, { path })
  const parsed = schema.safeParse(file.value)
  if (!parsed.success) throw new CorruptDataError(damaged, { path })
  return parsed.data
}
