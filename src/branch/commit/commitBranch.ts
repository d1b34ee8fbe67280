import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { BranchBusyError, BranchStaleError, ConflictError } from '../../errors/index.js'
import { acquireLock } from '../../store/lockFile.js'
import { workspaceLock } from '../../world/workspace/workspaceLock.js'
import type { Store } from '../../store/Store.js'
import { branchesDir, listStates, liveDir, readGeneration } from '../lifecycle/branchStore.js'
import { refuseOutOfReach } from './refuseOutOfReach.js'
import { assertPutLinksInside } from './assertPutLinksInside.js'
import { copyChange } from './copyChange.js'
import { holdBackGitChanges } from './holdBackGitChanges.js'
import { heldBackWith } from '../../world/checkout/heldBackGitPath.js'
import { gitRunPathsOf } from './gitRunPathsOf.js'
import { recordCommittedPaths } from './committedPaths.js'
import { type CommitJournal, type CommitOp, applyCommit, rollBackCommit, stagedPath, writeCommitJournal } from './commitJournal.js'
import { destroyBranch } from '../lifecycle/destroyBranch.js'
import { basePath, branchChanges, liveState, parentView, viewPath } from '../lifecycle/liveBranch.js'
import { mergeFileChange, writeMergedFile } from './mergeChange.js'
import { planCommit } from './planCommit.js'
import { commitNextSteps, settledPaths } from './commitInProgress.js'
import { stopCommit } from './stopCommit.js'
import { clearCommitState } from '../../world/merge/commitState.js'
import { self } from '../../sandbox/processId.js'
import type { BranchState, CommitHooks, CommitPolicy, CommitResult, InProgressOptions } from '../types.js'
import { counted } from '../../util/plural.js'
import { type ClosingMark, markClosing } from '../lifecycle/closingMark.js'

/**
 * Apply a branch's changes to its parent (the workspace, or the branch it was made from)
 * and tear the branch down. Only the paths the branch changed are looked at in the parent.
 * Under the parent's lock; journaled, so a crash is finished or rolled back by the next open.
 * @throws {BranchStaleError} `onConflict: "fail"` and a sibling committed first
 * A file both the branch and the parent changed is merged as `merge` merges worlds (text
 * line by line, the exec bit like content).
 * @throws {ConflictError} a changed path was also changed in the parent and does not merge (`data.paths`); nothing is applied
 * @throws {BranchBusyError} the branch has live children
 * @throws {UnsafePathError} a symlink it puts leads out (unless `allowExternalSymlinks`)
 * @throws {PathLimitError} a path it puts is out of reach of an image (`refuseOutOfReach`); nothing is applied
 * What git would run that the branch wrote (a `.git/config`, a hook, what the workspace's git configuration runs:
 * `readGitRunPaths`) is held back unless `trustGit` (`heldBack`).
 * `beforeApply` runs after staging and before the point of no return (the journal's `applying` phase).
 */
export async function commitBranch({
  store,
  workspace,
  id,
  onConflict = 'merge',
  allowExternalSymlinks = false,
  trustGit = false,
  stopOnConflict = false,
  resume = false,
  keepLeftovers = false,
  beforeApply,
}: {
  store: Store
  workspace: string
  id: string
} & CommitPolicy &
  InProgressOptions &
  CommitHooks): Promise<CommitResult> {
  const started = performance.now()
  const state = await liveState(store, id)
  await assertNoChildren(store, state)
  const parent = await parentView(store, workspace, state.parent)
  const lock =
    state.parent === null ? await workspaceLock(store) : await acquireLock(branchesDir(store, 'locks', `${state.parent}.lock`), { what: 'the commit lock of the parent branch' })
  let result: CommitResult
  let closing: ClosingMark | null = null
  try {
    closing = await markClosing(store, state, 'commit')
    const generation = await readGeneration(store, state.parent)
    if (onConflict === 'fail' && generation !== state.parentGeneration) {
      throw new BranchStaleError(`branch ${state.name} is stale: a sibling committed into its parent first (onConflict "fail"); abort it or commit with "merge"`, {
        name: state.name,
      })
    }
    const view = viewPath(store, state)
    const base = basePath(store, state)
    const settled = state.parent === null ? await settledPaths({ store, workspace, name: state.name, resume, keepLeftovers }) : new Set<string>()
    const changed = (await branchChanges(store, state)).filter((c) => !settled.has(c.path))
    await refuseOutOfReach('commit', changed, [view, parent])
    const held = trustGit ? null : heldBackWith(await gitRunPathsOf(workspace, changed))
    const { changes, heldBack } = held ? await holdBackGitChanges(view, changed, held) : { changes: changed, heldBack: [] }
    if (!allowExternalSymlinks) await assertPutLinksInside(view, changes)
    const merge = (path: string) => mergeFileChange({ store, base, view, parent, path })
    const plan = await planCommit({ changes, view, base, parent, merge })
    if (plan.conflicts.length > 0) {
      const stopped = stopOnConflict && state.parent === null && (await stopCommit({ store, branch: state.name, paths: plan.conflicts, sides: { store, base, view, parent } }))
      const count = counted(plan.conflicts.length, 'path')
      throw new ConflictError(
        `cannot commit ${state.name}: ${count} also changed in the parent since the branch was made, in ways that do not merge: ${plan.conflicts.slice(0, 10).join(', ')}${stopped ? `; the conflicts are marked in the workspace: ${commitNextSteps(state.name)}` : ''}`,
        { name: state.name, paths: plan.conflicts, inProgress: Boolean(stopped) },
      )
    }
    const ops: CommitOp[] = plan.apply.map((c) => ({ type: c.type, path: c.path }))
    const journal: CommitJournal = {
      kind: 'commit-journal',
      schemaVersion: 1,
      phase: 'staging',
      branch: state.id,
      parent: state.parent,
      committer: self,
      generation: generation + 1,
      ops,
    }
    await writeCommitJournal(store, journal)
    try {
      for (const op of ops) {
        if (op.type !== 'put') continue
        const merged = plan.merged.get(op.path)
        const temp = join(parent, stagedPath(op.path, 'new', state.id))
        if (merged) await writeMergedFile(temp, merged)
        else await copyChange(join(view, op.path), temp, op.path, held && { held, heldBack })
      }
      await beforeApply?.()
    } catch (err) {
      await rollBackCommit(parent, journal)
      await fs.rm(liveDir(store, state.id, 'commit.json'), { force: true })
      throw err
    }
    if (state.parent === null)
      await recordCommittedPaths(
        store,
        journal.generation,
        changes.map((c) => c.path),
      )
    await writeCommitJournal(store, { ...journal, phase: 'applying' })
    await applyCommit(store, parent, journal)
    if (settled.size > 0) await clearCommitState(store)
    result = {
      name: state.name,
      written: plan.apply.filter((c) => c.type === 'put').map((c) => c.path),
      deleted: plan.apply.filter((c) => c.type === 'delete').map((c) => c.path),
      alreadyThere: plan.alreadyThere,
      merged: [...plan.merged.keys()],
      heldBack: heldBack.sort(),
      durationMs: 0,
    }
  } catch (err) {
    await closing?.clear() // the branch lives on: it may run again
    throw err
  } finally {
    await lock.release()
  }
  await destroyBranch(store, state)
  return { ...result, durationMs: performance.now() - started }
}

async function assertNoChildren(store: Store, state: BranchState): Promise<void> {
  const children = (await listStates(store)).filter((s) => s.parent === state.id)
  if (children.length > 0) {
    throw new BranchBusyError(`branch ${state.name} has live branches (${children.map((c) => c.name).join(', ')}): commit or abort them first`, {
      name: state.name,
      children: children.map((c) => c.name),
      runs: 0,
    })
  }
}
