import { isAbsolute, relative } from 'node:path'

/** Whether `path` is `root` or lies below it (both absolute; compared as written, links not resolved). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))
}
