import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { Branch } from '../branch/Branch.js'
import type { Digest } from '../objects/digest.js'
import type { Store } from '../store/Store.js'
import { replacedEntries } from '../world/diff/diffTrees.js'
import { type FileWrite, layOut, writeFiles } from '../world/checkout/materializeTree.js'
import { treeSource } from '../world/tree/treeSource.js'

/**
 * Make a branch of tree `base` hold tree `image` instead: each entry that differs is
 * removed and written anew from the store (files copied, their digests checked). The
 * branch then commits three-way as if the candidate had run in it here.
 */
export async function applyImage(store: Store, branch: Branch, base: Digest, image: Digest): Promise<void> {
  const source = treeSource(store)
  const files: FileWrite[] = []
  for (const [path, entry] of await replacedEntries({ source, a: base, b: image })) {
    const abs = join(branch.path, path)
    await fs.rm(abs, { recursive: true, force: true })
    if (entry === null) continue
    if (entry.type === 'dir') {
      await fs.mkdir(abs)
      await layOut(source, entry.tree, abs, path, files)
    } else if (entry.type === 'symlink') {
      await fs.symlink(entry.target, abs)
    } else {
      files.push({ abs, entry, rel: path })
    }
  }
  await writeFiles(store, files, 'copy')
}
