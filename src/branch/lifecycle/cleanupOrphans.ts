import { promises as fs } from 'node:fs'
import type { Store } from '../../store/Store.js'
import { listBranchIds, liveDir, readState } from './branchStore.js'
import { forgetCommittedPaths } from '../commit/committedPaths.js'
import { applyCommit, readCommitJournal, rollBackCommit } from '../commit/commitJournal.js'
import { destroyBranch, removeHalfMade } from './destroyBranch.js'
import { parentView } from './liveBranch.js'
import { isAlive } from '../../sandbox/processId.js'

/** A branch directory without a state file younger than this may be one being made right now. */
const HALF_MADE_GRACE_MS = 10_000

export interface CleanupResult {
  /** Branches removed because the process they belonged to is gone (or their parent is). */
  removed: string[]
  /** Interrupted commits finished (rolled forward) or undone (rolled back). */
  finished: string[]
  rolledBack: string[]
}

/**
 * Leave nothing behind from processes that died: finish or undo their interrupted
 * commits, tear down the branches they owned (mounts, holders, directories), and remove
 * branches whose parent is gone, and the stdio files of their sandboxed runs. Persistent
 * branches (no owner) are kept.
 */
export async function cleanupOrphans({ store, workspace }: { store: Store; workspace: string }): Promise<CleanupResult> {
  const result: CleanupResult = { removed: [], finished: [], rolledBack: [] }
  for (const id of await listBranchIds(store)) {
    const state = await readState(store, id)
    if (state === null) {
      const st = await fs.stat(liveDir(store, id)).catch(() => null)
      if (st && Date.now() - st.mtimeMs > HALF_MADE_GRACE_MS) await removeHalfMade(liveDir(store, id))
      continue
    }
    const journal = await readCommitJournal(store, id)
    if (journal && !isAlive(journal.committer)) {
      const parent = await parentView(store, workspace, journal.parent)
      if (journal.phase === 'applying') {
        if (journal.parent === null) await forgetCommittedPaths(store, journal.generation)
        await applyCommit(store, parent, journal)
        await destroyBranch(store, state)
        result.finished.push(state.name)
        continue
      }
      await rollBackCommit(parent, journal)
      await fs.rm(liveDir(store, id, 'commit.json'), { force: true })
      result.rolledBack.push(state.name)
    }
    const parentGone = state.parent !== null && (await readState(store, state.parent)) === null
    if ((state.owner && !isAlive(state.owner)) || parentGone) {
      await destroyBranch(store, state)
      result.removed.push(state.name)
    }
  }
  return result
}
