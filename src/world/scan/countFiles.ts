import type { Digest } from '../../objects/digest.js'
import type { TreeSource } from '../tree/treeSource.js'

/** Regular files and their bytes. */
export interface FileCount {
  files: number
  bytes: number
}

/**
 * The regular files under a tree and their bytes. With `known` (counts by tree digest,
 * which never go stale), an unchanged subtree is counted once, whichever tree it is in.
 */
export async function countFiles(source: TreeSource, tree: Digest, known?: Map<Digest, FileCount>): Promise<FileCount> {
  const cached = known?.get(tree)
  if (cached) return cached
  const count = { files: 0, bytes: 0 }
  for (const entry of (await source(tree)).entries) {
    if (entry.type === 'dir') {
      const sub = await countFiles(source, entry.tree, known)
      count.files += sub.files
      count.bytes += sub.bytes
    } else if (entry.type === 'file') {
      count.files++
      count.bytes += entry.size
    }
  }
  known?.set(tree, count)
  return count
}
