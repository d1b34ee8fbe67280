import { promises as fs } from 'node:fs'
import type { Digest } from '../../objects/digest.js'
import { fsPath, readlinkNameAsync } from '../../util/fsName.js'
import type { Tree, TreeEntry } from '../../objects/Tree.js'

/** Links followed in one resolution before giving up, as Linux does (MAXSYMLINKS). */
export const MAX_LINK_HOPS = 40

export type LinkResolution = 'inside' | 'outside' | 'too-many-links'

/** What is at a path of a tree (its components): a symlink with its target, something else, or nothing. */
export type LinkLookup = (path: string[]) => Promise<{ symlink: string } | 'other' | undefined>

/**
 * Where the symlink at `path` (its components, inside a root) pointing at `target` leads,
 * walked as the kernel walks a path, through the root's own symlinks: `a -> .` and
 * `c -> a/a/a/../../../etc` climb out although the text of `c` alone looks contained.
 * Where the root has no such directory (a name it lacks, or a file), the rest is taken as
 * written: `..` climbs back lexically, so a link that would leave once someone makes that
 * directory is refused now. `lookup` is the root: a tree (`treeLookup`) or a directory
 * on disk (`directoryLookup`).
 */
export async function resolveLink(lookup: LinkLookup, path: string[], target: string): Promise<LinkResolution> {
  const end = await walk(lookup, path.slice(0, -1), target, { hops: 0 })
  return Array.isArray(end) ? 'inside' : end
}

/** The components `target` leads to from directory `dir`, or why it leaves. */
async function walk(lookup: LinkLookup, dir: string[], target: string, budget: { hops: number }): Promise<string[] | Exclude<LinkResolution, 'inside'>> {
  if (target.startsWith('/')) return 'outside'
  let at = [...dir]
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue
    if (part === '..') {
      if (at.length === 0) return 'outside'
      at.pop()
      continue
    }
    const found = await lookup([...at, part])
    if (typeof found !== 'object') {
      at.push(part)
      continue
    }
    if (++budget.hops > MAX_LINK_HOPS) return 'too-many-links'
    const next = await walk(lookup, at, found.symlink, budget)
    if (!Array.isArray(next)) return next
    at = next
  }
  return at
}

/** A tree as `resolveLink` sees it: entries looked up through real directories of the tree only. */
export function treeLookup(source: (digest: Digest) => Promise<Tree>, root: Digest): LinkLookup {
  const entries = new Map<Digest, Map<string, TreeEntry>>()
  const entriesOf = async (digest: Digest) => {
    let map = entries.get(digest)
    if (!map) entries.set(digest, (map = new Map((await source(digest)).entries.map((e) => [e.name, e]))))
    return map
  }
  return async (path) => {
    let tree = root
    for (let i = 0; i < path.length; i++) {
      const entry = (await entriesOf(tree)).get(path[i]!)
      if (i === path.length - 1) return entry === undefined ? undefined : entry.type === 'symlink' ? { symlink: entry.target } : 'other'
      if (entry?.type !== 'dir') return undefined
      tree = entry.tree
    }
    return undefined
  }
}

/** A directory on disk as `resolveLink` sees it (the path's ancestors are real directories: `walk` resolved every link on the way). */
export function directoryLookup(root: string): LinkLookup {
  return async (path) => {
    const abs = `${root}/${path.join('/')}`
    const st = await fs.lstat(fsPath(abs)).catch(() => undefined)
    if (!st) return undefined
    return st.isSymbolicLink() ? { symlink: await readlinkNameAsync(abs) } : 'other'
  }
}
