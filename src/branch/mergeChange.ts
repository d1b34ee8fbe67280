import { promises as fs } from 'node:fs'
import { join } from 'node:path'
import type { Digest } from '../store/digest.js'
import type { Store } from '../store/Store.js'
import { fsPath } from '../world/fsName.js'
import { MAX_LINE_MERGE_BYTES, mergeWorld } from '../world/mergeWorld.js'
import { readTree } from '../world/readObjects.js'
import { EXEC_MODE, fileEntry, treeObject } from '../world/Tree.js'
import { lstatOrNull } from './samePath.js'

/** A file both a branch and its parent changed, merged. */
export interface MergedFile {
  bytes: Buffer
  executable: boolean
}

/** The one name each side's file takes in the little trees the merge compares. */
const NAME = 'file'

/**
 * Merge one path that both the branch and its parent changed with the world's own merge
 * (`mergeWorld`: text line by line, the exec bit like content): the merged file, or null
 * when it does not merge cleanly, or when a side holds something other than a regular
 * file (a directory, a symlink; the base may lack the path: add/add).
 */
export async function mergeFileChange({ store, base, view, parent, path }: { store: Store; base: string; view: string; parent: string; path: string }): Promise<MergedFile | null> {
  const [b, ours, theirs] = await Promise.all([base, parent, view].map((root) => fileTree(store, join(root, path))))
  if (b === undefined || !ours || !theirs) return null
  const merged = await mergeWorld({ store, base: b, ours, theirs, labels: { ours: 'parent', base: 'base', theirs: 'branch' } })
  if (merged.conflicts.length > 0) return null
  const entry = (await readTree(store, merged.tree)).entries[0]
  if (entry?.type !== 'file' || !('blob' in entry)) return null
  return { bytes: await store.readBlob(entry.blob), executable: entry.mode === EXEC_MODE }
}

/** A tree holding the regular file at `abs` alone; null when nothing is there; undefined when it is not a file a line merge could take. */
async function fileTree(store: Store, abs: string): Promise<Digest | null | undefined> {
  const st = await lstatOrNull(abs)
  if (st === null) return null
  if (!st.isFile() || st.size > BigInt(MAX_LINE_MERGE_BYTES)) return undefined
  const bytes = await fs.readFile(fsPath(abs))
  const { digest, bytes: tree } = treeObject([fileEntry(NAME, (st.mode & 0o100n) !== 0n, bytes.length, await store.writeBlob(bytes), false)])
  await store.writeVerified(digest, tree)
  return digest
}

/** Write a merged file where a commit stages it (the temp must not exist). */
export async function writeMergedFile(to: string, file: MergedFile): Promise<void> {
  await fs.writeFile(fsPath(to), file.bytes, { flag: 'wx', mode: file.executable ? 0o755 : 0o644 })
  await fs.chmod(fsPath(to), file.executable ? 0o755 : 0o644) // past the umask
}
