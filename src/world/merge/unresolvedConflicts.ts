import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import { fsPath } from '../../util/fsName.js'
import type { PathConflict } from './mergeWorld.js'

/** The text conflicts (one file with markers at the path) whose file still has a marker line; a file the user removed is resolved. */
export async function filesWithMarkers(root: string, conflicts: PathConflict[]): Promise<string[]> {
  const texts = conflicts.filter((c) => c.kept.ours === c.path && c.kept.theirs === c.path).map((c) => c.path)
  const marked: string[] = []
  for (const path of texts) {
    const bytes = await fs.readFile(fsPath(join(root, path))).catch(() => null)
    if (bytes && hasMarkers(bytes)) marked.push(path)
  }
  return marked
}

/** The versions a merge kept beside a conflict (`NAME~LABEL`) that are still there: the user has not yet chosen between them. */
export async function leftoverFiles(root: string, conflicts: PathConflict[]): Promise<string[]> {
  const beside = conflicts.flatMap((c) => [c.kept.ours, c.kept.theirs].filter((p): p is string => p !== null && p !== c.path))
  const left: string[] = []
  for (const path of beside) if (await fs.lstat(fsPath(join(root, path))).catch(() => null)) left.push(path)
  return left
}

/** A line that opens or closes a conflict as the merge writes them (`<<<<<<< LABEL`, `>>>>>>> LABEL`) or divides one (`=======`). */
function hasMarkers(bytes: Buffer): boolean {
  return /^(<{7} |>{7} |={7}\r?$)/m.test(bytes.toString('latin1'))
}
