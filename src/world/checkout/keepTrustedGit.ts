import type { Digest } from '../../objects/digest.js'
import type { TreeEntry } from '../../objects/Tree.js'
import type { Store } from '../../store/Store.js'
import { InternalError } from '../../errors/index.js'
import { diffTrees } from '../diff/diffTrees.js'
import { entryAt } from '../tree/entryAt.js'
import { spliceTree } from '../tree/spliceTree.js'
import { treeSource } from '../tree/treeSource.js'
import { type IsHeldBack, isHeldBackGitPath } from './heldBackGitPath.js'

/**
 * `tree` with what git would run (`held`: by default `isHeldBackGitPath`) as `trusted` has it wherever `tree` adds or changes it: a
 * branch's image against its base, a merge against ours. Only the paths that differ are read (`diffTrees`, which
 * skips shared subtrees); a removal stays. A change reverts its topmost held-back path (a new hooks directory goes
 * whole). `heldBack`: the changed paths held back.
 */
export async function keepTrustedGit(store: Store, trusted: Digest, tree: Digest, held: IsHeldBack = isHeldBackGitPath): Promise<{ tree: Digest; heldBack: string[] }> {
  const source = treeSource(store)
  const heldBack: string[] = []
  const reverted = new Map<string, TreeEntry | null>()
  for (const change of await diffTrees({ source, a: trusted, b: tree })) {
    if (change.new === undefined) continue
    const top = topHeldPath(held, change.path, change.new.type === 'dir')
    if (top === null) continue
    heldBack.push(change.path)
    if (!reverted.has(top)) reverted.set(top, await entryAt(source, trusted, top.split('/')))
  }
  if (reverted.size === 0) return { tree, heldBack }
  const kept = await spliceTree(store, tree, reverted)
  if (kept === null) throw new InternalError('holding back git files: a path lies under no directory of the tree')
  return { tree: kept, heldBack }
}

/** The shortest prefix of `path` that is held back, or null. */
function topHeldPath(held: IsHeldBack, path: string, isDirectory: boolean): string | null {
  const names = path.split('/')
  for (let i = 1; i <= names.length; i++) {
    const prefix = names.slice(0, i).join('/')
    if (held(prefix, i < names.length || isDirectory)) return prefix
  }
  return null
}
