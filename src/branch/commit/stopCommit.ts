import { promises as fs } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import type { Store } from '../../store/Store.js'
import { atomicWrite } from '../../util/atomicWrite.js'
import { COMMIT_SAVED, type CommitState, type SavedFile, readCommitState, writeCommitState } from '../../world/merge/commitState.js'
import { fsPath } from '../../util/fsName.js'
import type { PathConflict } from '../../world/merge/mergeWorld.js'
import { type ConflictFiles, type PathSides, conflictFiles } from './mergeChange.js'
import { ancestorsAreDirectories } from './planCommit.js'
import { lstatOrNull } from './samePath.js'

/**
 * Leave a branch commit that met conflicts in progress in the workspace, as `merge` leaves
 * one: each conflicting path's files written (diff3 markers, `NAME~LABEL` beside), the
 * workspace's own versions saved first, then the state that names them. Returns the
 * conflicts, or null (nothing written) when a path cannot be finished in files (a
 * directory, a symlink, a missing parent directory, a file over 8 MiB).
 */
export async function stopCommit({
  store,
  branch,
  paths,
  sides,
}: {
  store: Store
  branch: string
  paths: string[]
  sides: Omit<PathSides, 'path'>
}): Promise<PathConflict[] | null> {
  const found: ConflictFiles[] = []
  for (const path of paths) {
    if (!(await ancestorsAreDirectories(sides.parent, path))) return null // a symlinked directory would lead the writes out
    const files = await conflictFiles({ ...sides, path }, branch)
    if (!files) return null
    found.push(await besideFreeNames(sides.parent, files))
  }
  const previous = await readCommitState(store)
  const saved: SavedFile[] = [...(previous?.saved ?? [])]
  await fs.mkdir(store.path(COMMIT_SAVED), { recursive: true })
  for (const file of found.flatMap((f) => f.files)) {
    saved.push(await saveOriginal(store, sides.parent, file.path, saved.length))
    await atomicWrite(join(sides.parent, file.path), file.bytes, { mode: file.executable ? 0o755 : 0o644 })
    await fs.chmod(fsPath(join(sides.parent, file.path)), file.executable ? 0o755 : 0o644) // past the umask
  }
  const conflicts = [...(previous?.conflicts ?? []), ...found.map((f) => f.conflict)]
  const state: CommitState = { kind: 'commit-state', schemaVersion: 1, branch, conflicts, saved }
  await writeCommitState(store, state)
  return found.map((f) => f.conflict)
}

/** The workspace's file at `path` copied aside (or noted absent), for `--abort`. */
async function saveOriginal(store: Store, root: string, path: string, n: number): Promise<SavedFile> {
  const st = await lstatOrNull(join(root, path))
  if (!st?.isFile()) return { path, copy: null, mode: 0o644 }
  const copy = String(n)
  await fs.copyFile(fsPath(join(root, path)), store.path(COMMIT_SAVED, copy))
  return { path, copy, mode: Number(st.mode & 0o777n) }
}

/** A version kept beside the path renamed `~2`, `~3` … while the workspace already has that name. */
async function besideFreeNames(root: string, found: ConflictFiles): Promise<ConflictFiles> {
  const { conflict } = found
  const renamed = new Map<string, string>()
  for (const file of found.files) {
    if (file.path === conflict.path) continue
    let candidate = file.path
    for (let n = 2; await lstatOrNull(join(root, candidate)); n++) candidate = join(dirname(file.path), `${basename(file.path)}~${n}`)
    renamed.set(file.path, candidate)
  }
  const at = (p: string | null) => (p === null ? null : (renamed.get(p) ?? p))
  return {
    conflict: { ...conflict, kept: { ours: at(conflict.kept.ours), theirs: at(conflict.kept.theirs) } },
    files: found.files.map((f) => ({ ...f, path: at(f.path)! })),
  }
}
