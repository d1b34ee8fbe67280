import type { Digest } from '../objects/digest.js'
import type { Store } from '../store/Store.js'
import { readSnapshot } from '../world/tree/readObjects.js'

/** A snapshot's parents, read once per snapshot however often the walks pass it. */
type ParentsOf = (id: Digest) => Promise<Digest[]>

function parentReader(store: Store): ParentsOf {
  const known = new Map<Digest, Promise<Digest[]>>()
  return (id) => {
    let parents = known.get(id)
    if (!parents) known.set(id, (parents = readSnapshot(store, id).then((s) => s.parents)))
    return parents
  }
}

/** The snapshots `starts` are and everything they descend from. */
async function ancestry(starts: Digest[], parentsOf: ParentsOf): Promise<Set<Digest>> {
  const seen = new Set<Digest>(starts)
  for (let frontier = [...seen]; frontier.length > 0;) {
    const next: Digest[] = []
    for (const parents of await Promise.all(frontier.map(parentsOf))) {
      for (const parent of parents) {
        if (!seen.has(parent)) {
          seen.add(parent)
          next.push(parent)
        }
      }
    }
    frontier = next
  }
  return seen
}

/**
 * The best common ancestors of two snapshots, as git's merge-base finds them: the snapshots
 * both descend from that no other common ancestor descends from. One in a plain history;
 * several after criss-cross merges (the caller merges them first, as git's recursive
 * strategy does); none for unrelated histories. Sorted by id, so the result is stable.
 */
export async function mergeBases({ store, a, b }: { store: Store; a: Digest; b: Digest }): Promise<Digest[]> {
  const parentsOf = parentReader(store)
  const [fromA, fromB] = await Promise.all([ancestry([a], parentsOf), ancestry([b], parentsOf)])
  const common = [...fromA].filter((id) => fromB.has(id))
  // Every ancestor of a common ancestor is common too: one walk from their parents finds all that are not best.
  const parents = (await Promise.all(common.map(parentsOf))).flat()
  const belowOthers = await ancestry(parents, parentsOf)
  return common.filter((id) => !belowOthers.has(id)).sort()
}
