import { dirname, join } from 'node:path'
import type { MergedFile } from './mergeChange.js'
import { lstatOrNull, samePath } from './samePath.js'
import type { BranchChange } from '../types.js'

export interface CommitPlan {
  apply: BranchChange[]
  alreadyThere: string[]
  conflicts: string[]
  /** Paths of `apply` that both sides changed, merged: staged from these bytes, not from the branch. */
  merged: Map<string, MergedFile>
}

/** Merge a path both sides changed: the merged file, or null for a conflict. */
export type MergePath = (path: string) => Promise<MergedFile | null>

/**
 * Three-way at path level, looking only at the paths the branch changed: a path the
 * parent still has as in the base takes the branch's version; a path the parent already
 * has as the branch does needs nothing; a file both changed is merged (`merge`), and a
 * conflict when it does not merge; any other is a conflict. A path whose directory the
 * parent no longer has (or has replaced by a file or symlink) is a conflict too.
 */
export async function planCommit({
  changes,
  view,
  base,
  parent,
  merge,
}: {
  changes: BranchChange[]
  view: string
  base: string
  parent: string
  merge: MergePath
}): Promise<CommitPlan> {
  const plan: CommitPlan = { apply: [], alreadyThere: [], conflicts: [], merged: new Map() }
  for (const change of changes) {
    const there = join(parent, change.path)
    if (!(await ancestorsAreDirectories(parent, change.path))) plan.conflicts.push(change.path)
    else if (await samePath(there, join(view, change.path))) plan.alreadyThere.push(change.path)
    else if (await samePath(there, join(base, change.path))) plan.apply.push(change)
    else await mergeOrConflict(plan, change, merge)
  }
  return plan
}

async function mergeOrConflict(plan: CommitPlan, change: BranchChange, merge: MergePath): Promise<void> {
  const merged = change.type === 'put' ? await merge(change.path) : null
  if (!merged) return void plan.conflicts.push(change.path)
  plan.apply.push(change)
  plan.merged.set(change.path, merged)
}

/** Every directory on the way to `rel` is a real directory (never a symlink to elsewhere). */
export async function ancestorsAreDirectories(root: string, rel: string): Promise<boolean> {
  const parts = dirname(rel)
    .split('/')
    .filter((p) => p !== '.' && p !== '')
  for (let i = 1; i <= parts.length; i++) {
    if (!(await lstatOrNull(join(root, ...parts.slice(0, i))))?.isDirectory()) return false
  }
  return true
}
