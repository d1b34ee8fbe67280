import { rmSync } from 'node:fs'
import { fsPath } from '../../util/fsName.js'
import { removeAtAnyDepth } from '../../util/removeAtAnyDepth.js'
import { quotePath } from '../../world/diff/quotePath.js'

/**
 * rm -rf that also gets through directories left without permissions (overlayfs makes
 * its `work/work` mode 000, which its unprivileged owner could not otherwise empty) and
 * paths longer than PATH_MAX (sandboxed work makes them a directory at a time).
 * Synchronous, as `rm -rf` is: what it removes (a branch's directory, a commit's old
 * copy) follows the size of a change, and Node's asynchronous rm spends more time hopping
 * to its thread pool than the kernel spends removing (the largest cost of aborting 16
 * branches at once).
 */
export async function removeTree(path: string): Promise<void> {
  try {
    rmSync(fsPath(path), { recursive: true, force: true })
  } catch {
    await removeAtAnyDepth(path, quotePath(path))
  }
}
