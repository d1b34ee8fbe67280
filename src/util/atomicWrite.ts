import { randomBytes } from 'node:crypto'
import { promises as fs } from 'node:fs'
import { dirname, join, basename } from 'node:path'

export function tempSibling(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`)
}

/**
 * Write a file so that readers see the old bytes or the new, never a mix: write a
 * temp sibling, optionally fsync it, rename over the target.
 */
export async function atomicWrite(path: string, data: Uint8Array | string, opts: { fsync?: boolean; mode?: number } = {}): Promise<void> {
  const tmp = tempSibling(path)
  const handle = await fs.open(tmp, 'w', opts.mode ?? 0o644)
  try {
    await handle.writeFile(data)
    if (opts.fsync) await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    await fs.rename(tmp, path)
  } catch (err) {
    await fs.rm(tmp, { force: true })
    throw err
  }
}
