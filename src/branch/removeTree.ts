import { promises as fs } from 'node:fs'
import { join } from 'node:path'

/**
 * rm -rf that also gets through directories left without permissions (overlayfs makes
 * its `work/work` mode 000, which its unprivileged owner could not otherwise empty).
 */
export async function removeTree(path: string): Promise<void> {
  try {
    await fs.rm(path, { recursive: true, force: true })
  } catch {
    await openUp(path)
    await fs.rm(path, { recursive: true, force: true })
  }
}

async function openUp(dir: string): Promise<void> {
  await fs.chmod(dir, 0o700).catch(() => undefined)
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => [])
  for (const e of entries) if (e.isDirectory()) await openUp(join(dir, e.name))
}
