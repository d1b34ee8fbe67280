import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { readRunArtifact } from './readRunArtifact.js'
import type { Run } from '../../objects/Run.js'
import { RunStore } from './RunStore.js'
import type { Digest } from '../../objects/digest.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import type { Store } from '../../store/Store.js'
import { parseRun } from './parseRun.js'

/** Whether `spec` names an artifact file rather than a stored run id. */
export function isRunFile(spec: string, cwd = process.cwd()): boolean {
  return spec.endsWith('.json') || spec.includes('/') || existsSync(resolve(cwd, spec))
}

/** A remote caller's rule for the files its request names: the confined real path, or a refusal. */
export type ConfineFile = (path: string) => Promise<string>

/**
 * A run named by a `*.run.json` path or a run id (full, unique prefix, or `latest`) in
 * the store. Artifacts are validated as `ci replay --artifact` validates them, step
 * hashes included, and migrated (RunArtifactError, exit 5, when bad); `rehash` (for
 * `ci normalize`) recomputes the hashes of a hand-edited artifact instead.
 */
export async function loadRun({ spec, rehash, confine, ...where }: { spec: string; rehash?: boolean; confine?: ConfineFile | undefined } & StoreLocator): Promise<Run> {
  if (isRunFile(spec, where.dir)) {
    const path = resolve(where.dir ?? process.cwd(), spec)
    return readRunArtifact(confine ? await confine(path) : path, { rehash }).run
  }
  return loadStoredRun((await openStore(where)).store, spec)
}

/** A run of the store by id (full, unique prefix, or `latest`); no file is ever read. */
export async function loadStoredRun(store: Store, spec: string): Promise<Run> {
  const runs = RunStore.open({ store, readOnly: true })
  try {
    return await runs.get(spec)
  } finally {
    runs.close()
  }
}

/** The run an image's trace layer holds (a `run` object). */
export async function readRunObject(store: Store, digest: Digest): Promise<Run> {
  return parseRun(await store.readBlob(digest), `run ${digest}`)
}
