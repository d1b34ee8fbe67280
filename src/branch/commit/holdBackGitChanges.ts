import { join } from 'node:path'
import type { IsHeldBack } from '../../world/checkout/heldBackGitPath.js'
import type { BranchChange } from '../types.js'
import { lstatOrNull } from './samePath.js'

/**
 * A branch's changes without its puts of what git would run something from (`held`: a `.git/config`, a hook, a
 * `.git` file, what the workspace's git configuration runs): the branch's sandboxed code wrote them, and the
 * caller's next git command would run them outside any sandbox. Removals are kept (a branch may remove a hook; it
 * cannot add or change one). Puts of a new directory holding such paths are kept and filtered as they are copied
 * (`copyChange`).
 */
export async function holdBackGitChanges(view: string, changes: BranchChange[], held: IsHeldBack): Promise<{ changes: BranchChange[]; heldBack: string[] }> {
  const kept: BranchChange[] = []
  const heldBack: string[] = []
  for (const change of changes) {
    // the lstat only where the answer depends on it
    const maybe = change.type === 'put' && (held(change.path, true) || held(change.path, false))
    if (maybe && held(change.path, Boolean((await lstatOrNull(join(view, change.path)))?.isDirectory()))) heldBack.push(change.path)
    else kept.push(change)
  }
  return { changes: kept, heldBack }
}
