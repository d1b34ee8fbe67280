import { realpathSync, statSync } from 'node:fs'
import { UnsafeStoreOwnerError } from '../errors/index.js'

let safeDirectories: readonly string[] = []

/**
 * The stores root may use though another user owns them, as git's `safe.directory`: store
 * directories, or `*` for any. The CLI reads them from `FORKPOINT_SAFE_DIRECTORY` (separated
 * by ':'); a library caller passes its own. Until then, none.
 */
export function allowStoreDirectories(dirs: readonly string[]): void {
  safeDirectories = dirs.filter(Boolean).map((d) => (d === '*' ? d : realOrSelf(d)))
}

/**
 * Refuse, as root, a store directory that another user owns and that is not allowed: a
 * repository someone else cloned or wrote may carry a `.forkpoint/` whose every file is
 * theirs, and root acting on it (mounting, removing, running) would act on their word.
 * @throws {UnsafeStoreOwnerError}
 */
export function assertStoreOwner(root: string): void {
  if (process.getuid?.() !== 0) return
  const owner = statSync(root).uid
  if (owner === 0 || safeDirectories.includes('*') || safeDirectories.includes(realOrSelf(root))) return
  throw new UnsafeStoreOwnerError(
    `refusing the store ${root}: it belongs to uid ${owner}, not to root, so its contents are another user's to choose (git refuses such a repository too). If you trust it, allow it with FORKPOINT_SAFE_DIRECTORY=${root} (several separated by ':', '*' for any)`,
    { root, owner },
  )
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}
