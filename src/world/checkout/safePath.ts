import { lstatSync } from 'node:fs'
import { dirname, isAbsolute, join, normalize, sep } from 'node:path'
import { UnsafePathError } from '../../errors/index.js'
import { errnoCode } from '../../util/fsx.js'
import { fsPath } from '../../util/fsName.js'

/**
 * Refuse to touch `root/rel` unless every directory between root and it is a real
 * directory (not a symlink), so nothing is ever written through a link out of `root`.
 * Missing ancestors are fine (they will be created as real directories).
 */
export function assertNoLinkedAncestor(root: string, rel: string): void {
  let dir = root
  const parts = rel.split('/')
  for (const part of parts.slice(0, -1)) {
    dir = join(dir, part)
    try {
      const st = lstatSync(fsPath(dir))
      if (!st.isDirectory()) throw new UnsafePathError(`refusing to write ${rel}: ${dir} is not a real directory (symlink or file)`, { path: rel })
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return
      throw err
    }
  }
}

/**
 * True when a symlink at `rel` (inside a root) pointing at `target` stays inside that
 * root: relative, and never climbing above it.
 */
export function symlinkStaysInside(rel: string, target: string): boolean {
  if (isAbsolute(target)) return false
  const resolved = normalize(join(dirname(rel), target))
  return resolved !== '..' && !resolved.startsWith(`..${sep}`) && !isAbsolute(resolved)
}
