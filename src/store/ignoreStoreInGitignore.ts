import { promises as fs } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { readTextOrNull } from '../util/fsx.js'

/**
 * Add the store to the workspace's existing `.gitignore`, so that git does not pick up
 * forkpoint's objects: `/.forkpoint/` appended unless a line already names it. Nothing
 * happens without a `.gitignore` (we do not create one) or with a store outside the
 * workspace. Returns whether the file was changed.
 */
export async function ignoreStoreInGitignore(workspace: string, storeDir: string): Promise<boolean> {
  const rel = relative(workspace, storeDir)
  if (rel === '' || rel.startsWith('..') || rel.startsWith(sep)) return false
  const path = join(workspace, '.gitignore')
  const text = await readTextOrNull(path)
  if (text === null) return false
  const name = rel.split(sep).join('/')
  const named = new Set([name, `${name}/`, `/${name}`, `/${name}/`])
  if (text.split(/\r?\n/).some((line) => named.has(line.trim()))) return false
  await fs.appendFile(path, `${text === '' || text.endsWith('\n') ? '' : '\n'}/${name}/\n`)
  return true
}
