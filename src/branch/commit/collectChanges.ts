import { join } from 'node:path'
import { lstatOrNull, readdirOrEmpty, samePath } from './samePath.js'
import type { BranchChange } from '../types.js'

const isWhiteout = (st: { isCharacterDevice(): boolean; rdev: bigint }): boolean => st.isCharacterDevice() && st.rdev === 0n

/**
 * What a branch changed against its base, as paths to put (whole subtrees for new or
 * replaced directories) and paths to delete. With `candidates` (an overlay's upper layer)
 * only the directories the branch touched are looked at, so the cost follows the size of
 * the change, not of the workspace; deletions (whiteouts, opaque directories) show as
 * names the base has and the view no longer has.
 */
export async function collectChanges({ view, base, candidates }: { view: string; base: string; candidates: string | null }): Promise<BranchChange[]> {
  const changes: BranchChange[] = []
  const walk = async (rel: string): Promise<void> => {
    const [inView, inBase, touched] = await Promise.all([
      readdirOrEmpty(join(view, rel)),
      readdirOrEmpty(join(base, rel)),
      candidates === null ? null : readdirOrEmpty(join(candidates, rel)),
    ])
    const present = new Set(inView)
    for (const name of inBase) if (!present.has(name)) changes.push({ path: join(rel, name), type: 'delete' })
    for (const name of touched ?? inView) {
      const path = join(rel, name)
      if (touched && !present.has(name)) continue // a whiteout: already listed as a deletion
      const [sv, sb] = await Promise.all([lstatOrNull(join(view, path)), lstatOrNull(join(base, path))])
      if (sv === null || isWhiteout(sv)) continue
      if (sv.isDirectory() && sb?.isDirectory()) await walk(path)
      else if (!(await samePath(join(view, path), join(base, path), { trustStat: candidates === null }))) changes.push({ path, type: 'put' })
    }
  }
  await walk('')
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}
