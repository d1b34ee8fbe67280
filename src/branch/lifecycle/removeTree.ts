import { promises as fs, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fsPath } from '../../util/fsName.js'

/**
 * rm -rf that also gets through directories left without permissions (overlayfs makes
 * its `work/work` mode 000, which its unprivileged owner could not otherwise empty).
 * Synchronous, as `rm -rf` is: what it removes (a branch's directory, a commit's old
 * copy) follows the size of a change, and Node's asynchronous rm spends more time hopping
 * to its thread pool than the kernel spends removing (the largest cost of aborting 16
 * branches at once).
 */
export async function removeTree(path: string): Promise<void> {
  try {
    rmSync(fsPath(path), { recursive: true, force: true })
  } catch {
    await openUp(path)
    rmSync(fsPath(path), { recursive: true, force: true })
  }
}

async function openUp(dir: string): Promise<void> {
  await fs.chmod(dir, 0o700).catch(() => undefined)
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => [])
  for (const e of entries) if (e.isDirectory()) await openUp(join(dir, e.name))
}
