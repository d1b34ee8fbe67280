import { existsSync, mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { RefConflictError } from '../errors/index.js'
import { atomicWriteSync } from '../util/atomicWrite.js'
import { assertDigest, type Digest } from '../objects/digest.js'
import { assertRefName } from './refs.js'
import type { Store } from './Store.js'

/**
 * Create many refs that must not exist yet, made durable together: each written without a
 * sync of its own, then all fsynced at once (one pass, as a snapshot's objects are). For
 * refs made by the hundred (a fork's children), where a lock, a sync and a reflog line per
 * ref would cost more than the rest of the work; such refs carry no reflog. The caller holds
 * whatever lock makes the names its own.
 * @throws {RefConflictError} when one of the refs exists already (none is written then)
 */
export async function createRefs(store: Store, refs: ReadonlyArray<{ name: string; id: Digest }>): Promise<void> {
  const paths = refs.map(({ name, id }) => (assertDigest(id), store.path(assertRefName(name))))
  const taken = refs.find((_, i) => existsSync(paths[i]!))
  if (taken) throw new RefConflictError(`ref ${taken.name} exists already`, { ref: taken.name })
  for (const dir of new Set(paths.map((p) => dirname(p)))) mkdirSync(dir, { recursive: true })
  refs.forEach(({ id }, i) => atomicWriteSync(paths[i]!, [Buffer.from(`${id}\n`)]))
  store.adoptUnsynced(paths)
  await store.sync()
}
