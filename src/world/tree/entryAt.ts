import type { Digest } from '../../objects/digest.js'
import type { TreeEntry } from '../../objects/Tree.js'
import type { TreeSource } from './treeSource.js'

/** The entry at a path of a tree, or null when there is none. */
export async function entryAt(source: TreeSource, tree: Digest, parts: string[]): Promise<TreeEntry | null> {
  let at: Digest = tree
  for (let i = 0; ; i++) {
    const entry = (await source(at)).entries.find((e) => e.name === parts[i])
    if (!entry || i === parts.length - 1) return entry ?? null
    if (entry.type !== 'dir') return null
    at = entry.tree
  }
}
