import { MalformedObjectError, UnsafePathError } from '../errors/index.js'
import { type Digest, isDigest, sha256 } from './digest.js'
import { bytesOfName, isCanonicalName } from '../util/fsName.js'
import type { EdgeRule } from './edges.js'
import type { StructuredObject } from './StructuredObject.js'

export const FILE_MODE = 0o644
export const EXEC_MODE = 0o755
export const DIR_MODE = 0o755
export const SYMLINK_MODE = 0o777

/** A regular file: small ones are one blob, files of 8 MiB and more a `chunks` object. */
export type FileEntry =
  | { name: string; type: 'file'; mode: typeof FILE_MODE | typeof EXEC_MODE; size: number; blob: Digest }
  | { name: string; type: 'file'; mode: typeof FILE_MODE | typeof EXEC_MODE; size: number; chunks: Digest }
export type DirEntry = { name: string; type: 'dir'; mode: typeof DIR_MODE; size: 0; tree: Digest }
export type SymlinkEntry = { name: string; type: 'symlink'; mode: typeof SYMLINK_MODE; size: number; target: string }
export type TreeEntry = FileEntry | DirEntry | SymlinkEntry

/** One directory, entries sorted by name (UTF-16 order, as canonical JSON sorts keys). */
export interface Tree {
  kind: 'tree'
  schemaVersion: 1
  entries: TreeEntry[]
}

export function makeTree(entries: TreeEntry[]): Tree {
  return { kind: 'tree', schemaVersion: 1, entries: [...entries].sort(byName) }
}

/** A tree of `entries` with its canonical bytes and their digest, ready to store. */
export function treeObject(entries: TreeEntry[]): { tree: Tree; bytes: Buffer; digest: Digest } {
  const tree = makeTree(entries)
  const bytes = treeBytes(tree)
  return { tree, bytes, digest: sha256(bytes) }
}

/** A file's entry: its content a blob, or a `chunks` object when `chunked`. */
export function fileEntry(name: string, executable: boolean, size: number, content: Digest, chunked: boolean): FileEntry {
  const mode = executable ? EXEC_MODE : FILE_MODE
  return chunked ? { name, type: 'file', mode, size, chunks: content } : { name, type: 'file', mode, size, blob: content }
}

export function symlinkEntry(name: string, target: string): SymlinkEntry {
  return { name, type: 'symlink', mode: SYMLINK_MODE, size: bytesOfName(target).length, target }
}

export function dirEntry(name: string, tree: Digest): DirEntry {
  return { name, type: 'dir', mode: DIR_MODE, size: 0, tree }
}

export function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0
}

/**
 * The canonical JSON bytes of a tree, written directly: the same bytes as
 * `canonicalBytes(tree)` (keys in sorted order, a test holds the two equal), without the
 * generic walk, since a scan serializes every directory of the workspace.
 */
export function treeBytes(tree: Tree): Buffer {
  const parts = tree.entries.map((e) => {
    const name = JSON.stringify(e.name)
    switch (e.type) {
      case 'file':
        return 'blob' in e
          ? `{"blob":"${e.blob}","mode":${e.mode},"name":${name},"size":${e.size},"type":"file"}`
          : `{"chunks":"${e.chunks}","mode":${e.mode},"name":${name},"size":${e.size},"type":"file"}`
      case 'dir':
        return `{"mode":${e.mode},"name":${name},"size":0,"tree":"${e.tree}","type":"dir"}`
      case 'symlink':
        return `{"mode":${e.mode},"name":${name},"size":${e.size},"target":${JSON.stringify(e.target)},"type":"symlink"}`
    }
  })
  return Buffer.from(`{"entries":[${parts.join(',')}],"kind":"tree","schemaVersion":1}`, 'utf8')
}

/** The digest a file entry's content is stored under (a blob or a chunks object). */
export function contentDigest(entry: FileEntry): Digest {
  return 'blob' in entry ? entry.blob : entry.chunks
}

/** One path component and nothing more: not empty, `.` or `..`, no `/` or NUL; bytes escaped only as a scan escapes them (fsName.ts). */
export function isSafeName(name: unknown): name is string {
  return typeof name === 'string' && name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('\0') && isCanonicalName(name)
}

/** A name from a tree may be used as one path component and nothing more. */
export function assertSafeName(name: unknown, where: string): string {
  if (!isSafeName(name)) {
    throw new UnsafePathError(`unsafe name ${JSON.stringify(name)} in ${where}`, { name: String(name), where })
  }
  return name
}

/**
 * Check a tree read from the store or a remote: every entry well-formed, every name a
 * single safe component, no duplicates. Throws (exit 5) instead of letting a hostile
 * tree reach checkout. Hand-written, not a zod schema: a checkout or clone checks every
 * entry of every tree (100k entries for a 100k-file image), and a zod schema of the entry
 * shape alone took 1.5 times as long as this whole check, names and order included.
 */
export function validateTree(value: unknown, where: string): Tree {
  const tree = value as Tree
  if (validTrees.has(tree)) return tree
  if (tree?.kind !== 'tree' || !Array.isArray(tree.entries)) throw new MalformedObjectError(`${where} is not a tree`)
  let previous: string | null = null
  for (const e of tree.entries) {
    assertSafeName(e?.name, where)
    if (previous !== null && byName({ name: previous }, e) >= 0) {
      throw new MalformedObjectError(`${where}: entries not sorted or duplicated at ${JSON.stringify(e.name)}`)
    }
    previous = e.name
    if (!validEntry(e)) throw new MalformedObjectError(`${where}: malformed entry ${JSON.stringify(e.name)}`, { entry: e })
  }
  validTrees.add(tree)
  return tree
}

/**
 * Tree objects found valid, by identity: a parsed tree is never changed, and a clone's
 * arrival, its image check and its symlink check each asked for every tree (the 100k
 * entries of a 100k-file image, each time).
 */
const validTrees = new WeakSet<object>()

function validEntry(e: TreeEntry): boolean {
  if (!Number.isSafeInteger(e.size) || e.size < 0) return false
  switch (e.type) {
    case 'file':
      return (e.mode === FILE_MODE || e.mode === EXEC_MODE) && ('blob' in e ? isDigest(e.blob) : 'chunks' in e && isDigest(e.chunks))
    case 'dir':
      return isDigest(e.tree)
    case 'symlink':
      return typeof e.target === 'string' && e.target.length > 0 && !e.target.includes('\0') && isCanonicalName(e.target)
    default:
      return false
  }
}

/** A tree names its entries' contents and subtrees; names and link targets are its users' text. A `chunks` object's are generic (Chunks.ts). */
export const TREE_EDGES: EdgeRule = { only: new Set(['blob', 'chunks', 'tree']) }

/** The digests a tree names as file content (`entries[].blob`), with the sizes it gives them; none for another kind. */
export function fileBlobs(object: StructuredObject): Map<Digest, number> {
  const entries = object.kind === 'tree' ? (object as { entries?: unknown }).entries : null
  const blobs = new Map<Digest, number>()
  if (!Array.isArray(entries)) return blobs
  // only ever asked about edges, which are digests already: no need to test these again
  for (const e of entries as Array<{ blob?: unknown; size?: unknown }>) if (typeof e?.blob === 'string') blobs.set(e.blob as Digest, Number(e.size))
  return blobs
}
