import { closeSync, promises as fs, fstatSync } from 'node:fs'
import { readIntoSync } from '../util/fsx.js'
import { type Digest, isDigest, sha256 } from '../objects/digest.js'
import { objectEdges } from '../objects/kinds.js'
import { snapshotParents } from '../objects/Snapshot.js'
import { fileBlobs } from '../objects/Tree.js'
import { notRegular, openStoreFileSync } from './readObjectBytes.js'
import { readShallow } from './shallow.js'
import type { Store } from './Store.js'
import { parseStructured } from './Store.js'
import type { StructuredObject } from '../objects/StructuredObject.js'

/** An object file as a walk sees it: its size and, when it is structured, its parsed form. */
export interface ObjectFile {
  size: number
  object: StructuredObject | null
  /** False when asked to `hash` and a structured object's bytes no longer hash to its digest. */
  intact: boolean
}

/**
 * Read the object file at `path` as a walk needs it, or null when there is none. Structured
 * objects are canonical JSON beginning with `{"`; blobs are anything else, of which only
 * two bytes are read. A blob that happens to be such JSON parses too, which can only keep
 * more alive (but a tree's file contents are blobs by what names them, and only looked for:
 * `statBlob`).
 */
export function readObjectFile(path: string, digest: Digest, { hash }: { hash: boolean }): ObjectFile | null {
  const fd = openStoreFileSync(path)
  if (fd === null) return null
  // synchronously: a walk reads thousands of small trees, and each of the five calls through the thread pool cost more than the call
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw notRegular(path)
    const { size } = stat
    if (!isStructured(readIntoSync(fd, Buffer.alloc(2)))) return { size, object: null, intact: true }
    return objectFromBytes(readIntoSync(fd, Buffer.allocUnsafe(size)), digest, { hash })
  } finally {
    closeSync(fd)
  }
}

/** `readObjectFile` of bytes in hand (a packed object's). */
export function objectFromBytes(bytes: Buffer, digest: Digest, { hash }: { hash: boolean }): ObjectFile {
  const size = bytes.length
  if (!isStructured(bytes)) return { size, object: null, intact: true }
  if (hash && sha256(bytes) !== digest) return { size, object: null, intact: false }
  try {
    return { size, object: parseStructured(bytes, digest), intact: true }
  } catch {
    return { size, object: null, intact: true }
  }
}

function isStructured(bytes: Buffer): boolean {
  return bytes.length >= 2 && bytes[0] === 0x7b && bytes[1] === 0x22 // {"
}

/**
 * An object of the store as a walk sees it (`readObjectFile`), from its file or its pack;
 * null when the store lacks it. A packed object whose frame is damaged is not intact.
 */
export function readStoredObject(store: Store, digest: Digest, { hash }: { hash: boolean }): ObjectFile | null {
  const file = readObjectFile(store.objectPath(digest), digest, { hash })
  if (file !== null) return file
  const at = store.packs.locate(digest)
  if (at === undefined) return null
  const bytes = store.packs.readOrDamaged(at)
  return bytes === 'damaged' ? { size: at.object.size, object: null, intact: false } : objectFromBytes(bytes, digest, { hash })
}

/** An object of the walk: read (structured objects parsed), its corruption decided by `hashedCorrupt` when the caller hashed everything already. */
function readForWalk(store: Store, digest: Digest, hashedCorrupt?: ReadonlySet<Digest>): Read {
  const file = readStoredObject(store, digest, { hash: !hashedCorrupt })
  if (file === null) return 'missing'
  return (hashedCorrupt?.has(digest) ?? !file.intact) ? { object: 'corrupt', size: file.size } : file
}

/** A file's content, named so by a tree: a blob whatever its bytes, so only its presence and size are read. */
function statBlob(store: Store, digest: Digest): Read {
  const size = store.sizeOf(digest)
  return size === null ? 'missing' : { object: null, size }
}

type Read = { object: StructuredObject | null | 'corrupt'; size: number } | 'missing'

export interface GraphWalk {
  /** Every object reached, with its size in bytes. */
  reachable: Map<Digest, number>
  /** Objects named by a reachable object (or a root) but absent from the store. */
  missing: Map<Digest, Digest | 'root'>
  /** Reachable structured objects whose bytes no longer match their digest (their edges are unknown). */
  corrupt: Set<Digest>
  /** Reachable structured objects read intact (snapshots, trees, chunk lists...), in the order the walk reached them. */
  structured: Set<Digest>
  /** Objects of `known` the walk reached (and went no further). */
  reachedKnown: Set<Digest>
}

/**
 * Everything reachable from `roots`, and what is missing on the way. Parents of the
 * store's shallow snapshots are followed where present and never missing; parents of
 * `cutAt` snapshots are not followed at all (a shallow push). A caller that has
 * just re-hashed every object passes the ones that failed as `hashedCorrupt`, and the
 * walk trusts the others instead of hashing them again. Objects of `known` (a set closed
 * under reachability: an image a remote holds) are neither read nor reported, and the
 * walk goes no further there: what it reports is what lies beyond them.
 */
export async function walkGraph(
  store: Store,
  roots: Iterable<Digest>,
  {
    hashedCorrupt,
    cutAt,
    sizesFromTrees = false,
    known,
    onContent,
  }: {
    hashedCorrupt?: ReadonlySet<Digest>
    cutAt?: ReadonlySet<Digest>
    /**
     * File contents take the size their (hashed) tree gives them and are not looked for: a
     * caller that reads every blob afterwards, checking each (a push), learns of a missing one then.
     */
    sizesFromTrees?: boolean
    known?: { has(digest: Digest): boolean }
    /**
     * Told of each reachable object that is not structured (file contents, chunks, a
     * corrupt one), in the order `reachable` holds them, as the walk reaches it; awaited
     * when it answers a promise (a push packs them meanwhile).
     */
    onContent?: (digest: Digest, size: number) => Promise<void> | undefined
  } = {},
): Promise<GraphWalk> {
  const cut = await readShallow(store)
  const reachable = new Map<Digest, number>()
  const missing = new Map<Digest, Digest | 'root'>()
  const corrupt = new Set<Digest>()
  const structured = new Set<Digest>()
  const absent = new Set<Digest>()
  const reachedKnown = new Set<Digest>()
  const isKnown = (digest: Digest): boolean => {
    if (!known?.has(digest)) return false
    reachedKnown.add(digest)
    return true
  }
  const queue: Array<{ digest: Digest; from: Digest | 'root'; optional: boolean; blob: boolean }> = [...roots].map((digest) => ({
    digest,
    from: 'root',
    optional: false,
    blob: false,
  }))
  // one object after another: reads are synchronous (see readObjectFile)
  for (let i = 0; i < queue.length; i++) {
    const { digest, from, optional, blob } = queue[i]!
    if (reachable.has(digest) || missing.has(digest) || (optional && absent.has(digest)) || isKnown(digest)) continue
    const read = blob ? statBlob(store, digest) : readForWalk(store, digest, hashedCorrupt)
    if (read === 'missing') {
      if (optional) absent.add(digest)
      else missing.set(digest, from)
      continue
    }
    reachable.set(digest, read.size)
    const { object } = read
    if (object === 'corrupt' || object === null) {
      const turn = onContent?.(digest, read.size)
      if (turn) await turn
    }
    if (object === 'corrupt') corrupt.add(digest)
    else if (object) {
      structured.add(digest)
      const parents = cut.has(digest) || cutAt?.has(digest) ? snapshotParents(object) : new Set<Digest>()
      const blobs = fileBlobs(object)
      for (const child of objectEdges(object)) {
        if (cutAt?.has(digest) && parents.has(child)) continue
        if (reachable.has(child) || isKnown(child)) continue
        if (sizesFromTrees && blobs.has(child)) {
          reachable.set(child, blobs.get(child)!) // nothing to read: not queued
          const turn = onContent?.(child, blobs.get(child)!)
          if (turn) await turn
        } else queue.push({ digest: child, from: digest, optional: parents.has(child), blob: blobs.has(child) })
      }
    }
  }
  return { reachable, missing, corrupt, structured, reachedKnown }
}

/** Every object file in the store, by digest. */
export async function listObjects(store: Store): Promise<Digest[]> {
  return (await listShards(store)).objects
}

/** One pass over the object shards: the objects, and the dot-files writers leave there while they write (paths). */
export async function listShards(store: Store): Promise<{ objects: Digest[]; temps: string[] }> {
  const base = store.path('objects', 'sha256')
  const objects: Digest[] = []
  const temps: string[] = []
  for (const shard of await fs.readdir(base).catch(() => [] as string[])) {
    if (!/^[0-9a-f]{2}$/.test(shard)) continue
    for (const name of await fs.readdir(`${base}/${shard}`)) {
      const digest = `sha256:${shard}${name}`
      if (isDigest(digest)) objects.push(digest)
      else if (name.startsWith('.')) temps.push(`${base}/${shard}/${name}`)
    }
  }
  return { objects, temps }
}
