import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { StoreCorruptError, UsageError } from '../../errors/index.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import { readStateOrNull } from '../../store/readStateFile.js'
import { atomicWrite } from '../../util/atomicWrite.js'
import { COMMIT_SAVED, clearCommitState, readCommitState } from '../../world/merge/commitState.js'
import { fsPath } from '../../util/fsName.js'
import { withWorkspaceLock } from '../../world/workspace/workspaceLock.js'
import { assertNoLinkedAncestor } from '../../world/checkout/safePath.js'

/**
 * Undo a branch commit in progress in the workspace: every file the stopped commit wrote
 * is put back as it was (whatever the user did to it since), one it added is removed, and
 * the commit ends. The branch stays live, to commit again or abort.
 * @throws {UsageError} when no commit of branch `name` is in progress
 */
export async function abortCommit({ name, ...where }: StoreLocator & { name: string }): Promise<{ name: string; restored: string[] }> {
  const { store, workspace } = await openStore(where)
  return withWorkspaceLock(store, async () => {
    const state = await readCommitState(store)
    if (state?.branch !== name) throw new UsageError(`commit ${name} --abort: no commit of ${name} is in progress`, { name })
    for (const saved of [...state.saved].reverse()) {
      assertNoLinkedAncestor(workspace, saved.path)
      const at = join(workspace, saved.path)
      if (saved.copy === null) await fs.rm(fsPath(at), { force: true })
      else {
        await atomicWrite(at, savedCopy(store.path(COMMIT_SAVED, saved.copy)), { mode: saved.mode })
        await fs.chmod(fsPath(at), saved.mode) // past the umask
      }
    }
    await clearCommitState(store)
    return { name, restored: [...new Set(state.saved.map((s) => s.path))] }
  })
}

/** The largest copy `--abort` puts back: the files a stopped commit wrote over are the ones it merged as text. */
const MAX_SAVED_BYTES = 1024 * 1024 * 1024

/** A file's copy kept for `--abort`. */
function savedCopy(path: string): Buffer {
  const bytes = readStateOrNull(path, MAX_SAVED_BYTES)
  if (bytes === null) throw new StoreCorruptError(`${path}, a file's copy kept for 'commit --abort', is missing`, { path })
  return bytes
}
