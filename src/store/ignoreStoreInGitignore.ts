import { join, relative, sep } from 'node:path'
import { addIgnoreLine } from './addIgnoreLine.js'

/**
 * Add the store to the workspace's existing `.gitignore`, so that git does not pick up
 * forkpoint's objects: `/.forkpoint/` appended unless a line already names it. Nothing
 * happens without a `.gitignore` (we do not create one; `excludeStoreInGit` covers a
 * git repository then) or with a store outside the workspace. Returns whether the file
 * was changed.
 */
export async function ignoreStoreInGitignore(workspace: string, storeDir: string): Promise<boolean> {
  const name = pathInside(workspace, storeDir)
  return name !== null && addIgnoreLine(join(workspace, '.gitignore'), name, { create: false })
}

/** `path` relative to `dir` with `/` between names, or null when it is not inside `dir`. */
export function pathInside(dir: string, path: string): string | null {
  const rel = relative(dir, path)
  if (rel === '' || rel.startsWith('..') || rel.startsWith(sep)) return null
  return rel.split(sep).join('/')
}
