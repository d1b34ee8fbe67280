import type { Digest } from '../../objects/digest.js'
import type { Store } from '../../store/Store.js'
import { EXEC_MODE, FILE_MODE, type FileEntry, type Tree, type TreeEntry, dirEntry, fileEntry, treeObject } from '../../objects/Tree.js'
import { DEFAULT_RENAMES, type RenameOptions } from '../diff/findRenames.js'
import { looksBinary } from '../diff/looksBinary.js'
import { type ConflictLabels, mergeLines } from './mergeLines.js'
import { type SideRename, mergeRenames } from './mergeRenames.js'
import { EMPTY_TREE, type TreeSource, joinPath, sameEntry, treeSource, zipEntries } from '../tree/treeSource.js'

/** Why a path could not be merged on its own. */
export type ConflictKind = 'content' | 'add/add' | 'modify/delete' | 'type' | 'mode' | 'rename/rename' | 'rename/delete'

/**
 * A path both sides changed in ways that do not merge. `kept` says where each side's version
 * now is in the merged tree: at the path itself, beside it as `NAME~LABEL`, or nowhere (that
 * side deleted it). A text conflict is one file at the path, with conflict markers. A rename
 * conflict's path is the base's, and `kept` names each side's new path (null: deleted there).
 */
export interface PathConflict {
  path: string
  kind: ConflictKind
  kept: { ours: string | null; theirs: string | null }
}

export interface WorldMerge {
  /** The merged tree, conflicts included (markers, both versions), written to the store. */
  tree: Digest
  conflicts: PathConflict[]
  /** Text files both sides changed whose lines merged cleanly. */
  lineMerged: string[]
  /** The renames found on either side that the other side's changes followed or that conflict. */
  renames: SideRename[]
  /** Some candidate pairs were too many to compare by content: only identical files were paired as renames. */
  inexactRenamesSkipped: boolean
}

/** Files larger than this, chunked files and files with a NUL byte are merged as binary: never line by line. */
export const MAX_LINE_MERGE_BYTES = 8 * 1024 * 1024

interface Context {
  store: Store
  source: TreeSource
  labels: ConflictLabels
  conflicts: PathConflict[]
  lineMerged: string[]
}

/**
 * Three-way merge of two worlds (trees) against their base, path by path: a path one side
 * changed takes that side; the same change on both is taken once; directories both changed
 * merge inside; text files both changed merge line by line (conflict markers in git's diff3
 * style where hunks overlap); a mode change merges with a content change. Whatever else
 * both sides changed keeps **both** versions: ours at the path and theirs beside it as
 * `NAME~LABEL` (a directory always keeps the path), each listed as a conflict. Nothing is
 * lost either way, so the caller can write the tree out and let a human finish.
 *
 * Renames come first (`mergeRenames`, unless `renames` is false): a file one side renamed
 * and the other changed merges at the new path; renamed apart on each side, or renamed and
 * deleted, it is a conflict.
 */
export async function mergeWorld({
  store,
  base,
  ours,
  theirs,
  labels,
  renames = DEFAULT_RENAMES,
}: {
  store: Store
  base: Digest | null
  ours: Digest
  theirs: Digest
  labels: ConflictLabels
  /** How renames are found; false: not at all (a renamed file is a deletion and an addition). */
  renames?: RenameOptions | false
}): Promise<WorldMerge> {
  const source = readOnce(treeSource(store))
  const found = base && renames ? await mergeRenames({ store, source, base, ours, theirs, options: renames }) : null
  const trees = found?.trees ?? { base, ours, theirs }
  const ctx: Context = { store, source, labels, conflicts: [], lineMerged: [] }
  const { digest: tree } = await mergeDir(ctx, trees.base, trees.ours, trees.theirs, '')
  const conflicts = [...ctx.conflicts, ...(found?.conflicts ?? [])]
  return { tree, conflicts, lineMerged: ctx.lineMerged, renames: found?.renames ?? [], inexactRenamesSkipped: found?.inexactSkipped ?? false }
}

/** A source that reads each tree once: rename detection and the path merge walk the same trees. */
function readOnce(source: TreeSource): TreeSource {
  const trees = new Map<Digest, Promise<Tree>>()
  return (digest) => {
    if (!trees.has(digest)) trees.set(digest, source(digest))
    return trees.get(digest)!
  }
}

async function mergeDir(ctx: Context, base: Digest | null, ours: Digest | null, theirs: Digest | null, prefix: string): Promise<{ digest: Digest; empty: boolean }> {
  const [b, o, t] = await Promise.all([base, ours, theirs].map(async (d) => (d ? ctx.source(d) : EMPTY_TREE)))
  const entries: TreeEntry[] = []
  const taken = new Set([...o!.entries, ...t!.entries].map((e) => e.name))
  const keepBeside = (entry: TreeEntry, label: string): string => {
    const name = besideName(entry.name, label, taken)
    taken.add(name)
    entries.push({ ...entry, name })
    return joinPath(prefix, name)
  }
  for (const {
    name,
    entries: [be, oe, te],
  } of zipEntries(b!, o!, t!)) {
    const path = joinPath(prefix, name)
    const merged = await mergeEntry(ctx, path, be, oe, te, keepBeside)
    if (merged) entries.push(merged)
  }
  const { bytes, digest } = treeObject(entries)
  await ctx.store.writeVerified(digest, bytes)
  return { digest, empty: entries.length === 0 }
}

type KeepBeside = (entry: TreeEntry, label: string) => string

async function mergeEntry(
  ctx: Context,
  path: string,
  be: TreeEntry | undefined,
  oe: TreeEntry | undefined,
  te: TreeEntry | undefined,
  keepBeside: KeepBeside,
): Promise<TreeEntry | undefined> {
  if (sameEntry(oe, te)) return oe
  if (sameEntry(be, oe)) return te
  if (sameEntry(be, te)) return oe
  if (!oe || !te) {
    const changed = (oe ?? te)!
    // A directory one side deleted and the other changed: inside it, each file's own case applies.
    if (changed.type === 'dir' && be?.type === 'dir') return mergeSubdir(ctx, path, changed.name, be, oe, te)
    ctx.conflicts.push({ path, kind: 'modify/delete', kept: { ours: oe ? path : null, theirs: te ? path : null } })
    return changed
  }
  if (oe.type === 'dir' && te.type === 'dir') return mergeSubdir(ctx, path, oe.name, be, oe, te)
  if (oe.type === 'file' && te.type === 'file') return mergeFiles(ctx, path, be, oe, te, keepBeside)
  return keepBoth(ctx, path, oe.type !== te.type ? 'type' : be ? 'content' : 'add/add', oe, te, keepBeside)
}

async function mergeSubdir(
  ctx: Context,
  path: string,
  name: string,
  be: TreeEntry | undefined,
  oe: TreeEntry | undefined,
  te: TreeEntry | undefined,
): Promise<TreeEntry | undefined> {
  const dir = (e: TreeEntry | undefined) => (e?.type === 'dir' ? e.tree : null)
  const { digest, empty } = await mergeDir(ctx, dir(be), dir(oe), dir(te), path)
  return empty && (!oe || !te) ? undefined : dirEntry(name, digest)
}

/** Both versions kept: a directory at the path (the other beside it), else ours at the path and theirs beside it. */
function keepBoth(ctx: Context, path: string, kind: ConflictKind, oe: TreeEntry, te: TreeEntry, keepBeside: KeepBeside): TreeEntry {
  if (te.type === 'dir' && oe.type !== 'dir') {
    ctx.conflicts.push({ path, kind, kept: { ours: keepBeside(oe, ctx.labels.ours), theirs: path } })
    return te
  }
  ctx.conflicts.push({ path, kind, kept: { ours: path, theirs: keepBeside(te, ctx.labels.theirs) } })
  return oe
}

async function mergeFiles(ctx: Context, path: string, be: TreeEntry | undefined, oe: FileEntry, te: FileEntry, keepBeside: KeepBeside): Promise<TreeEntry> {
  const base = be?.type === 'file' ? be : undefined
  const mode = mergedMode(base?.mode, oe.mode, te.mode)
  if (mode === 'conflict') {
    if (contentOf(oe) === contentOf(te)) {
      ctx.conflicts.push({ path, kind: 'mode', kept: { ours: path, theirs: null } })
      return oe
    }
    return keepBoth(ctx, path, 'mode', oe, te, keepBeside)
  }
  if (contentOf(oe) === contentOf(te)) return { ...oe, mode }
  if (base && contentOf(base) === contentOf(oe)) return { ...te, mode }
  if (base && contentOf(base) === contentOf(te)) return { ...oe, mode }
  const texts = await textsOf(ctx.store, [base, oe, te])
  if (!texts) return keepBoth(ctx, path, base ? 'content' : 'add/add', oe, te, keepBeside)
  const [baseText, ourText, theirText] = texts
  const merged = mergeLines({ base: baseText, ours: ourText, theirs: theirText, labels: ctx.labels })
  const blob = await ctx.store.writeBlob(merged.bytes)
  if (merged.clean) ctx.lineMerged.push(path)
  else ctx.conflicts.push({ path, kind: base ? 'content' : 'add/add', kept: { ours: path, theirs: path } })
  return fileEntry(oe.name, mode === EXEC_MODE, merged.bytes.length, blob, false)
}

/** The exec bit merges like content: the side that changed it wins; both changing it differently is a conflict. */
function mergedMode(base: number | undefined, ours: number, theirs: number): typeof FILE_MODE | typeof EXEC_MODE | 'conflict' {
  if (ours === theirs) return ours as typeof FILE_MODE
  if (base === ours) return theirs as typeof FILE_MODE
  if (base === theirs) return ours as typeof FILE_MODE
  return 'conflict'
}

const contentOf = (e: FileEntry): Digest => ('blob' in e ? e.blob : e.chunks)

/** The three versions' bytes when all are text a line merge can take (an absent base is empty), else null. */
async function textsOf(store: Store, files: Array<FileEntry | undefined>): Promise<[Buffer, Buffer, Buffer] | null> {
  if (files.some((f) => f && (!('blob' in f) || f.size > MAX_LINE_MERGE_BYTES))) return null
  const bytes = await Promise.all(files.map(async (f) => (f && 'blob' in f ? store.readBlob(f.blob) : Buffer.alloc(0))))
  return bytes.some(looksBinary) ? null : (bytes as [Buffer, Buffer, Buffer])
}

/** `NAME~LABEL`, with `~2`, `~3` … added until no entry of the directory has that name. */
function besideName(name: string, label: string, taken: Set<string>): string {
  const stem = `${name}~${label.replace(/[/\0]/g, '_')}`
  let candidate = stem
  for (let n = 2; taken.has(candidate); n++) candidate = `${stem}~${n}`
  return candidate
}
