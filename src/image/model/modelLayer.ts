import { existsSync, promises as fs } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { UnsafePathError, UsageError } from '../../errors/index.js'
import { isInside } from '../../util/isInside.js'
import type { Digest } from '../../objects/digest.js'
import { type ModelLayer, validateModelLayer } from '../../objects/ModelLayer.js'
import { canonicalBytes } from '../../util/canonicalJson.js'
import type { Store } from '../../store/Store.js'
import { readTree } from '../../world/tree/readObjects.js'
import { type Piece, filePieces, readRange } from '../storedPieces.js'
import { storeFile } from '../../world/scan/storeFile.js'
import type { Chunks } from '../../objects/Chunks.js'
import { type FileEntry, type TreeEntry, dirEntry, fileEntry } from '../../objects/Tree.js'
import { joinPath } from '../../world/tree/treeSource.js'
import { type SafetensorsFile, parseSafetensors } from './safetensors.js'

/** Tensors larger than this are stored in pieces of this size, so no object is huge. */
const MAX_PIECE = 4 * 1024 * 1024

export const isSafetensors = (path: string): boolean => path.endsWith('.safetensors')

/**
 * Store a model directory as a model layer: every regular file (a symlink is followed to
 * its file when it stays inside the directory, or inside the `blobs/` of the Hugging Face
 * cache repository whose snapshot the directory is), `.safetensors` files checked and
 * stored in tensor-aligned pieces, so two versions of an adapter share every tensor
 * that did not change; other files as the workspace stores them.
 * @throws {UsageError} when `dir` is not a directory or holds something that is neither a file nor a directory
 * @throws {UnsafePathError} a symlink leading out of `dir` (exit 5): its target would be stored and pushed
 * @throws {MalformedTensorFileError} when a `.safetensors` file is not well-formed (exit 5)
 */
export async function storeModelDir(store: Store, dir: string): Promise<Digest> {
  const stat = await fs.stat(dir).catch(() => null)
  if (!stat?.isDirectory()) throw new UsageError(`--model ${dir}: not a directory`, { dir })
  const real = await fs.realpath(dir)
  const tree = await storeDir(store, dir, '', new Set([real]), await linkRoots(real))
  const layer: ModelLayer = { kind: 'model', schemaVersion: 1, tree }
  return store.writeBlob(canonicalBytes(layer))
}

/** Node reads a file into one Buffer of at most this many bytes. */
const MAX_READ = 2 ** 31 - 1

/**
 * Where a model directory's symlinks may lead (real paths): the directory itself, and for a
 * Hugging Face cache snapshot (`<repo>/snapshots/<rev>`, whose files link to `<repo>/blobs/`)
 * that repository's `blobs/`.
 */
async function linkRoots(real: string): Promise<string[]> {
  const blobs = join(dirname(dirname(real)), 'blobs')
  return basename(dirname(real)) === 'snapshots' && existsSync(blobs) ? [real, await fs.realpath(blobs)] : [real]
}

/**
 * `inside`: the real paths of the directories above, so a symlink back up is refused, not
 * followed forever; `roots`: where symlinks may lead (`linkRoots`).
 */
async function storeDir(store: Store, dir: string, prefix: string, inside: Set<string>, roots: string[]): Promise<Digest> {
  const entries: TreeEntry[] = []
  for (const name of (await fs.readdir(dir)).sort()) {
    const path = join(dir, name)
    const rel = joinPath(prefix, name)
    const stat = await fs.stat(path).catch(() => null)
    if (!stat) throw new UsageError(`model file ${rel} is a symlink to nothing`, { path: rel })
    await assertLinkInside(path, rel, roots)
    if (stat.isDirectory()) {
      const real = await fs.realpath(path)
      if (inside.has(real)) throw new UsageError(`model directory ${rel} leads back to a directory above it`, { path: rel })
      entries.push(dirEntry(name, await storeDir(store, path, rel, new Set([...inside, real]), roots)))
    } else if (!stat.isFile()) throw new UsageError(`model file ${rel} is neither a file nor a directory`, { path: rel })
    else if (isSafetensors(name) && stat.size > MAX_READ)
      throw new UsageError(`model file ${rel} is over 2 GiB: safetensors files that large are not stored yet (shard the model)`, { path: rel })
    else if (isSafetensors(name)) entries.push(await storeTensorFile(store, name, await fs.readFile(path), rel))
    else {
      // a link checked to stay inside is read at its target: storeFile opens no link
      const stored = await storeFile({ store, path: await fs.realpath(path), size: stat.size, write: true })
      entries.push(fileEntry(name, (stat.mode & 0o111) !== 0, stored.size, stored.content, stored.chunked))
    }
  }
  return store.writeObject({ kind: 'tree', schemaVersion: 1, entries })
}

/** A symlink in a model directory must lead inside it (or its cache repository's blobs). @throws {UnsafePathError} */
async function assertLinkInside(path: string, rel: string, roots: string[]): Promise<void> {
  if (!(await fs.lstat(path)).isSymbolicLink()) return
  const target = await fs.realpath(path)
  if (!roots.some((root) => isInside(root, target))) {
    throw new UnsafePathError(`model file ${rel} is a symlink leading out of the model directory (to ${target}): copy the file in if it belongs to the model`, {
      path: rel,
      target,
    })
  }
}

/** A safetensors file's entry: its bytes checked, stored as the header and then each tensor (in pieces of at most 4 MiB). */
export async function storeTensorFile(store: Store, name: string, bytes: Buffer, where: string): Promise<FileEntry> {
  const file = parseSafetensors(bytes, where)
  const parts = [bytes.subarray(0, file.dataStart), ...file.tensors.map((t) => bytes.subarray(t.begin, t.end))]
  return storeTensorParts(store, name, parts)
}

/**
 * A file's entry from its parts in order: bytes (stored in pieces of at most 4 MiB) or
 * pieces already in the store (a tensor carried over unread).
 */
export async function storeTensorParts(store: Store, name: string, parts: Array<Uint8Array | Piece[]>): Promise<FileEntry> {
  const chunks: Chunks['chunks'] = []
  for (const part of parts) {
    if (!(part instanceof Uint8Array)) chunks.push(...part.map(({ blob, size }) => ({ blob, size })))
    else
      for (let at = 0; at < part.length; at += MAX_PIECE)
        chunks.push({ blob: await store.writeBlob(part.subarray(at, at + MAX_PIECE)), size: Math.min(MAX_PIECE, part.length - at) })
  }
  const size = chunks.reduce((n, c) => n + c.size, 0)
  const object: Chunks = { kind: 'chunks', schemaVersion: 1, size, chunks }
  return fileEntry(name, false, size, await store.writeBlob(canonicalBytes(object)), true)
}

/** A safetensors file as the store holds it: its header, checked, and the pieces its bytes are in (nothing else read). */
export interface StoredTensorFile {
  file: SafetensorsFile
  pieces: Piece[]
}

export async function openTensorFile(store: Store, entry: FileEntry, where: string): Promise<StoredTensorFile> {
  const pieces = await filePieces(store, entry)
  const start = readRange(store, pieces, 0, Math.min(8, entry.size))
  const headerEnd = start.length === 8 ? 8 + Math.min(Number(start.readBigUInt64LE(0)), entry.size) : start.length
  return { file: parseSafetensors(readRange(store, pieces, 0, headerEnd), where, entry.size), pieces }
}

/** The model layer object `digest` names (MalformedObjectError, exit 5, when it is something else). */
export async function readModelLayer(store: Store, digest: Digest): Promise<ModelLayer> {
  return validateModelLayer(await store.readObject(digest), `model layer ${digest}`)
}

/** Every file of a model tree by its path. */
export async function modelFiles(store: Store, tree: Digest, prefix = '', into = new Map<string, FileEntry>()): Promise<Map<string, FileEntry>> {
  for (const entry of (await readTree(store, tree)).entries) {
    const path = joinPath(prefix, entry.name)
    if (entry.type === 'dir') await modelFiles(store, entry.tree, path, into)
    else if (entry.type === 'file') into.set(path, entry)
  }
  return into
}

/** A stored file's bytes, whole (each piece checked as it is read). */
export async function readFileBytes(store: Store, entry: FileEntry): Promise<Buffer> {
  return readRange(store, await filePieces(store, entry), 0, entry.size)
}
