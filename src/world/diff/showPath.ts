import { UsageError } from '../../errors/index.js'
import type { Digest } from '../../objects/digest.js'
import { openStore, type StoreLocator } from '../../store/findStore.js'
import { resolveId } from '../../store/resolveId.js'
import { entryAt } from '../tree/entryAt.js'
import { bytesOfName } from '../../util/fsName.js'
import { type TreeListing, listTree } from '../tree/listTree.js'
import { looksBinary } from './looksBinary.js'
import { readChunks, readSnapshot } from '../tree/readObjects.js'
import { contentDigest } from '../../objects/Tree.js'
import { treeSource } from '../tree/treeSource.js'

/** Past this size a file's JSON description carries no `text`: its bytes are for a stream (`fileContent`). */
export const MAX_SHOWN_TEXT_BYTES = 1024 * 1024

/** A file or symlink of an image: what it is, and its text when that is short UTF-8 (a symlink's: its target). */
export interface ShownFile {
  kind: 'file' | 'symlink'
  id: Digest
  path: string
  mode: number
  size: number
  /** The blob or chunks object holding a file's bytes; null for a symlink. */
  content: Digest | null
  chunked: boolean
  target?: string
  /** The content as text, or null when it is binary, not UTF-8 or over MAX_SHOWN_TEXT_BYTES. */
  text: string | null
}

export type ShownPath = ShownFile | ({ kind: 'dir' } & TreeListing)

/** `ID:PATH` split at the colon that ends the id (a `sha256:` id keeps its own); null when there is none. */
export function splitPathSpec(spec: string): { id: string; path: string } | null {
  const at = spec.indexOf(':', spec.startsWith('sha256:') ? 'sha256:'.length : 0)
  return at < 0 ? null : { id: spec.slice(0, at), path: spec.slice(at + 1) }
}

/**
 * A path of an image's file tree, as `git show ID:PATH` shows it: a directory listed, a file
 * or symlink described (its bytes come from `fileContent`).
 * @throws {UsageError} the image has nothing at `path`
 */
export async function showPath({ id: spec, path, ...locator }: StoreLocator & { id: string; path: string }): Promise<ShownPath> {
  const { store } = await openStore(locator)
  const id = await resolveId(store, spec)
  const parts = path.split('/').filter((p) => p !== '' && p !== '.')
  if (parts.length === 0) return { kind: 'dir', ...(await listTree({ store, id })) }
  const entry = await entryAt(treeSource(store), (await readSnapshot(store, id)).world.tree, parts)
  if (!entry) throw new UsageError(`path ${parts.join('/')} does not exist in image ${id}`, { path })
  if (entry.type === 'dir') return { kind: 'dir', ...(await listTree({ store, id, path: parts.join('/') })) }
  const base = { id, path: parts.join('/'), mode: entry.mode, size: entry.size }
  if (entry.type === 'symlink') return { kind: 'symlink', ...base, content: null, chunked: false, target: entry.target, text: entry.target }
  const chunked = 'chunks' in entry
  const text = chunked || entry.size > MAX_SHOWN_TEXT_BYTES ? null : textOf(await store.readBlob(entry.blob))
  return { kind: 'file', ...base, content: contentDigest(entry), chunked, text }
}

/** Bytes as text when they are UTF-8 and not binary (git's NUL rule), else null. */
export function textOf(bytes: Buffer): string | null {
  if (looksBinary(bytes)) return null
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return null
  }
}

/** A file's bytes as stored, a piece at a time (a chunked file chunk by chunk, each checked); a symlink's target. */
export async function* fileContent({ file, ...locator }: StoreLocator & { file: Pick<ShownFile, 'kind' | 'content' | 'chunked' | 'target'> }): AsyncGenerator<Buffer> {
  if (file.kind === 'symlink' || !file.content) {
    yield bytesOfName(file.target ?? '')
    return
  }
  const { store } = await openStore(locator)
  if (!file.chunked) {
    yield await store.readBlob(file.content)
    return
  }
  for (const part of (await readChunks(store, file.content)).chunks) yield await store.readBlob(part.blob)
}
