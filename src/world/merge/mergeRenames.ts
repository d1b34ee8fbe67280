import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { entryAt } from '../tree/entryAt.js'
import { type Rename, type RenameOptions, findRenames } from '../diff/findRenames.js'
import type { PathConflict } from './mergeWorld.js'
import { moveInTree } from '../tree/moveInTree.js'
import type { TreeSource } from '../tree/treeSource.js'

type Side = 'ours' | 'theirs'

/** A rename one side made, as the merge found it. */
export type SideRename = Rename & { side: Side }

/** The three trees a path-by-path merge then takes, the conflicts renames make, and what was found. */
export interface RenamedTrees {
  trees: { base: Digest; ours: Digest; theirs: Digest }
  conflicts: PathConflict[]
  renames: SideRename[]
  inexactSkipped: boolean
}

const OTHER: Record<Side, Side> = { ours: 'theirs', theirs: 'ours' }

/**
 * Renames turned into moves, so that the path-by-path merge lines the versions up: a file
 * one side renamed and the other changed moves, in the base and in that other side, to the
 * new path (the change follows the file); a file both renamed alike moves in the base. A
 * file the sides renamed apart, or one renamed and one deleted, is a conflict (both new
 * paths, or the renamed one, stay in the tree). A move that cannot be made (the other side
 * has something at the new path, or a file where a directory of it would go) is left out:
 * that path merges as it would without renames.
 */
export async function mergeRenames({
  store,
  source,
  base,
  ours,
  theirs,
  options,
}: {
  store: Store
  source: TreeSource
  base: Digest
  ours: Digest
  theirs: Digest
  options: RenameOptions
}): Promise<RenamedTrees> {
  const trees = { base, ours, theirs }
  const [o, t] = await Promise.all([
    findRenames({ store, source, base, side: ours, other: theirs, options }),
    findRenames({ store, source, base, side: theirs, other: ours, options }),
  ])
  const renames: SideRename[] = [...o.renames.map((r) => ({ ...r, side: 'ours' as const })), ...t.renames.map((r) => ({ ...r, side: 'theirs' as const }))]
  const inexactSkipped = o.inexactSkipped || t.inexactSkipped
  const newPath = { ours: new Map(o.renames.map((r) => [r.from, r.to])), theirs: new Map(t.renames.map((r) => [r.from, r.to])) }
  const moves = { base: new Map<string, string>(), ours: new Map<string, string>(), theirs: new Map<string, string>() }
  const conflicts: PathConflict[] = []
  for (const { side, from, to } of renames) {
    const other = OTHER[side]
    const elsewhere = newPath[other].get(from)
    if (elsewhere === to) {
      if (side === 'ours') moves.base.set(to, from)
    } else if (elsewhere !== undefined) {
      if (side === 'ours') conflicts.push({ path: from, kind: 'rename/rename', kept: { ours: to, theirs: elsewhere } })
    } else {
      const there = await entryAt(source, trees[other], from.split('/'))
      if (there === null) conflicts.push({ path: from, kind: 'rename/delete', kept: side === 'ours' ? { ours: to, theirs: null } : { ours: null, theirs: to } })
      else if (there.type === 'file' && !moves.base.has(to) && (await entryAt(source, trees[other], to.split('/'))) === null) {
        moves.base.set(to, from)
        moves[other].set(to, from)
      }
    }
  }
  const moved = await Promise.all((['base', 'ours', 'theirs'] as const).map((k) => moveInTree(store, source, trees[k], moves[k])))
  const [b, mine, yours] = moved
  return { trees: b && mine && yours ? { base: b, ours: mine, theirs: yours } : trees, conflicts, renames, inexactSkipped }
}
