import { promises as fs } from 'node:fs'
import { readTextOrNull } from '../util/fsx.js'

/**
 * Append `/NAME/` to an ignore file (`.gitignore`, `.git/info/exclude`) unless a line
 * already names NAME (`NAME`, `NAME/`, `/NAME`, `/NAME/`). `create` makes the file when
 * it is missing; otherwise a missing file is left so. Returns whether the file changed.
 */
export async function addIgnoreLine(path: string, name: string, { create }: { create: boolean }): Promise<boolean> {
  const text = await readTextOrNull(path)
  if (text === null && !create) return false
  const named = new Set([name, `${name}/`, `/${name}`, `/${name}/`])
  if (text !== null && text.split(/\r?\n/).some((line) => named.has(line.trim()))) return false
  const before = text === null || text === '' || text.endsWith('\n') ? '' : '\n'
  await fs.appendFile(path, `${before}/${name}/\n`)
  return true
}
