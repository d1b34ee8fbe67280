import { promises as fs } from 'node:fs'
import { join } from 'node:path'

/**
 * Every non-directory under `root` (and, with `dirs`, every directory by name) with what
 * changes when it is written: inode, size, mtime and ctime. Two fingerprints differ exactly
 * at the paths written, created or removed in between. `skip` leaves out one top-level name
 * (the store). For an overlay, `root` is the upper layer, so the cost follows the change;
 * its directories are left out, since copy-up makes them appear without any change.
 */
export async function fingerprint(root: string, { skip, dirs = true }: { skip?: string | undefined; dirs?: boolean } = {}): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  const walk = async (rel: string): Promise<void> => {
    const entries = await fs.readdir(join(root, rel), { withFileTypes: true }).catch(() => [])
    await Promise.all(
      entries.map(async (e) => {
        if (rel === '' && e.name === skip) return
        const path = rel === '' ? e.name : `${rel}/${e.name}`
        if (e.isDirectory()) {
          if (dirs) out.set(path, 'dir')
          return walk(path)
        }
        const st = await fs.lstat(join(root, path), { bigint: true }).catch(() => null)
        if (st) out.set(path, `${st.mode}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.rdev}`)
      }),
    )
  }
  await walk('')
  return out
}

/** The paths whose fingerprint differs, sorted. */
export function changedBetween(before: Map<string, string>, after: Map<string, string>): string[] {
  const changed = new Set<string>()
  for (const [path, sig] of after) if (before.get(path) !== sig) changed.add(path)
  for (const path of before.keys()) if (!after.has(path)) changed.add(path)
  return [...changed].sort()
}
