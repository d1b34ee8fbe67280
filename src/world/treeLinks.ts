import type { Digest } from '../store/digest.js'
import type { Tree, TreeEntry } from './Tree.js'

/** Links followed in one resolution before giving up, as Linux does (MAXSYMLINKS). */
export const MAX_LINK_HOPS = 40

export type LinkResolution = 'inside' | 'outside' | 'too-many-links'

/**
 * Where symlinks of one tree lead, walked as the kernel walks a path, through the tree's
 * own symlinks: `a -> .` and `c -> a/a/a/../../../etc` climb out although the text of
 * `c` alone looks contained. Where the tree has no such directory (a name it lacks, or a
 * file), the rest is taken as written: `..` climbs back lexically, so a link that would
 * leave once someone makes that directory is refused now.
 */
export class TreeLinks {
  private readonly entries = new Map<Digest, Map<string, TreeEntry>>()

  constructor(
    private readonly source: (digest: Digest) => Promise<Tree>,
    private readonly root: Digest,
  ) {}

  /** Where the symlink at `path` (its components) pointing at `target` leads. */
  async resolve(path: string[], target: string): Promise<LinkResolution> {
    const end = await this.walk(path.slice(0, -1), target, { hops: 0 })
    return Array.isArray(end) ? 'inside' : end
  }

  /** The components `target` leads to from directory `dir` (inside the root), or why it leaves. */
  private async walk(dir: string[], target: string, budget: { hops: number }): Promise<string[] | Exclude<LinkResolution, 'inside'>> {
    if (target.startsWith('/')) return 'outside'
    let at = [...dir]
    for (const part of target.split('/')) {
      if (part === '' || part === '.') continue
      if (part === '..') {
        if (at.length === 0) return 'outside'
        at.pop()
        continue
      }
      const entry = await this.lookup([...at, part])
      if (entry?.type !== 'symlink') {
        at.push(part)
        continue
      }
      if (++budget.hops > MAX_LINK_HOPS) return 'too-many-links'
      const next = await this.walk(at, entry.target, budget)
      if (!Array.isArray(next)) return next
      at = next
    }
    return at
  }

  /** The entry at `path`, through real directories only (links on the way are resolved by `walk` first). */
  private async lookup(path: string[]): Promise<TreeEntry | undefined> {
    let tree = this.root
    for (let i = 0; i < path.length; i++) {
      const entry = (await this.entriesOf(tree)).get(path[i]!)
      if (i === path.length - 1) return entry
      if (entry?.type !== 'dir') return undefined
      tree = entry.tree
    }
    return undefined
  }

  private async entriesOf(digest: Digest): Promise<Map<string, TreeEntry>> {
    let map = this.entries.get(digest)
    if (!map) {
      map = new Map((await this.source(digest)).entries.map((e) => [e.name, e]))
      this.entries.set(digest, map)
    }
    return map
  }
}
