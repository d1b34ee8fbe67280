import { isAbsolute, relative, sep } from 'node:path'

/** Whether `path` is `root` or lies below it (both absolute; compared as written, links not resolved). A name that only starts with `..` (`..hooks`) is below. */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}
