import { lstatSync } from 'node:fs'
import { CorruptDataError } from '../errors/index.js'
import { readStateTextOrNull } from './readStateFile.js'
import { appendUntrustedSync } from '../util/untrustedRead.js'

/**
 * Append `/NAME/` to an ignore file (`.gitignore`, `.git/info/exclude`) unless a line
 * already names NAME (`NAME`, `NAME/`, `/NAME`, `/NAME/`). `create` makes the file when
 * it is missing; otherwise a missing file is left so. Returns whether the file changed.
 * An ignore file that is not a regular file (a cloned repository's `.gitignore` may be a
 * link to anywhere), or larger than any ignore file a scan reads, is left alone: git does
 * not follow such a link either.
 */
const MAX_EDITED_BYTES = 1024 * 1024

export async function addIgnoreLine(path: string, name: string, { create }: { create: boolean }): Promise<boolean> {
  const st = lstatSync(path, { throwIfNoEntry: false })
  if (st && (!st.isFile() || st.size > MAX_EDITED_BYTES)) return false
  const text = st ? readStateTextOrNull(path) : null
  if (text === null && !create) return false
  const named = new Set([name, `${name}/`, `/${name}`, `/${name}/`])
  if (text !== null && text.split(/\r?\n/).some((line) => named.has(line.trim()))) return false
  const before = text === null || text === '' || text.endsWith('\n') ? '' : '\n'
  appendUntrustedSync(path, `${before}/${name}/\n`, () => new CorruptDataError(`${path} is no longer a regular file: refusing to append to it`, { path }))
  return true
}
