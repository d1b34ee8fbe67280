import { promises as fs } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { fsPath } from '../../util/fsName.js'
import type { ConflictLabels } from '../../world/merge/mergeLines.js'
import { MAX_LINE_MERGE_BYTES, type PathConflict, type WorldMerge, mergeWorld } from '../../world/merge/mergeWorld.js'
import { readTree } from '../../world/tree/readObjects.js'
import { EXEC_MODE, fileEntry, treeObject } from '../../objects/Tree.js'
import { joinPath } from '../../world/tree/treeSource.js'
import { lstatOrNull } from './samePath.js'

/** A file both a branch and its parent changed, merged. */
export interface MergedFile {
  bytes: Buffer
  executable: boolean
}

/** Where the three versions of a path are: the branch's base, the parent as it is now, the branch's view. */
export interface PathSides {
  store: Store
  base: string
  view: string
  parent: string
  path: string
}

/** What a path that does not merge leaves in the parent for a human to finish: the files to write (markers, `NAME~LABEL`) and the conflict as `merge` lists it. */
export interface ConflictFiles {
  conflict: PathConflict
  files: Array<MergedFile & { path: string }>
}

const LABELS: ConflictLabels = { ours: 'parent', base: 'base', theirs: 'branch' }

/**
 * Merge one path that both the branch and its parent changed with the world's own merge
 * (`mergeWorld`: text line by line, the exec bit like content): the merged file, or null
 * when it does not merge cleanly, or when a side holds something other than a regular
 * file (a directory, a symlink; the base may lack the path: add/add).
 */
export async function mergeFileChange(sides: PathSides): Promise<MergedFile | null> {
  const merged = await mergeSides(sides, LABELS, false)
  if (!merged || merged.conflicts.length > 0) return null
  const entry = (await readTree(sides.store, merged.tree)).entries[0]
  if (entry?.type !== 'file' || !('blob' in entry)) return null
  return { bytes: await sides.store.readBlob(entry.blob), executable: entry.mode === EXEC_MODE }
}

/**
 * The files a path that does not merge leaves in the parent, as `merge` leaves a conflict:
 * text with git's diff3 markers at the path (labels `parent` and the branch's name), another
 * version beside it as `NAME~LABEL`, a changed file kept against a delete. Null when a side
 * is not a regular file a line merge could take (a directory, a symlink, over 8 MiB).
 */
export async function conflictFiles(sides: PathSides, branch: string): Promise<ConflictFiles | null> {
  const merged = await mergeSides(sides, { ...LABELS, theirs: branch }, true)
  const found = merged?.conflicts[0]
  if (!merged || !found) return null
  const dir = dirname(sides.path) === '.' ? '' : dirname(sides.path)
  const at = (name: string | null) => (name === null ? null : joinPath(dir, name))
  const files: ConflictFiles['files'] = []
  for (const entry of (await readTree(sides.store, merged.tree)).entries) {
    if (entry.type !== 'file' || !('blob' in entry)) return null
    files.push({ path: at(entry.name)!, bytes: await sides.store.readBlob(entry.blob), executable: entry.mode === EXEC_MODE })
  }
  return { conflict: { path: sides.path, kind: found.kind, kept: { ours: at(found.kept.ours), theirs: at(found.kept.theirs) } }, files }
}

/** The world merge of the path's three versions as one-file trees; null when a side cannot take part (or, `absentSides` false, is missing). */
async function mergeSides({ store, base, view, parent, path }: PathSides, labels: ConflictLabels, absentSides: boolean): Promise<WorldMerge | null> {
  const name = basename(path)
  const [b, ours, theirs] = await Promise.all([base, parent, view].map((root) => fileTree(store, join(root, path), name)))
  if (b === undefined || ours === undefined || theirs === undefined) return null
  if (!absentSides && (!ours || !theirs)) return null
  return mergeWorld({ store, base: b, ours: ours ?? (await emptyTree(store)), theirs: theirs ?? (await emptyTree(store)), labels })
}

/** A tree holding the regular file at `abs` alone, as `name`; null when nothing is there; undefined when it is not a file a line merge could take. */
async function fileTree(store: Store, abs: string, name: string): Promise<Digest | null | undefined> {
  const st = await lstatOrNull(abs)
  if (st === null) return null
  if (!st.isFile() || st.size > BigInt(MAX_LINE_MERGE_BYTES)) return undefined
  const bytes = await fs.readFile(fsPath(abs))
  const { digest, bytes: tree } = treeObject([fileEntry(name, (st.mode & 0o100n) !== 0n, bytes.length, await store.writeBlob(bytes), false)])
  await store.writeVerified(digest, tree)
  return digest
}

async function emptyTree(store: Store): Promise<Digest> {
  const { digest, bytes } = treeObject([])
  await store.writeVerified(digest, bytes)
  return digest
}

/** Write a merged file where a commit stages it (the temp must not exist). */
export async function writeMergedFile(to: string, file: MergedFile): Promise<void> {
  await fs.writeFile(fsPath(to), file.bytes, { flag: 'wx', mode: file.executable ? 0o755 : 0o644 })
  await fs.chmod(fsPath(to), file.executable ? 0o755 : 0o644) // past the umask
}
